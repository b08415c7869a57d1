// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LogSoftmax along one axis: x - max - log(sum exp(x - max)), in double, so a row never goes through an
// underflowed softmax (log 0 = -inf) as Log(Softmax(x)) would.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class LogSoftmaxKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    int axis;
    if (!normalize_axis(std::get<SoftmaxAttrs>(node_.attrs).axis, x.shape.rank, &axis))
      return fail("bad axis");
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= x.shape[i];
    for (int i = axis + 1; i < x.shape.rank; ++i) inner *= x.shape[i];
    const int64_t n = x.shape[axis];
    const float* px = x.f32();
    float* py = args.dst[0]->f32();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t t = 0; t < inner; ++t) {
        const float* xs = px + o * n * inner + t;
        float* ys = py + o * n * inner + t;
        float mx = -INFINITY;
        for (int64_t j = 0; j < n; ++j) mx = xs[j * inner] > mx ? xs[j * inner] : mx;
        double sum = 0.0;
        for (int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(xs[j * inner]) - mx);
        const double shift = mx + std::log(sum);
        for (int64_t j = 0; j < n; ++j) ys[j * inner] = static_cast<float>(xs[j * inner] - shift);
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_log_softmax(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const SoftmaxAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<LogSoftmaxKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
