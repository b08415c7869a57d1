// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Softmax along one axis: exp(x - max) / sum, the sum accumulated in double.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class SoftmaxKernel final : public RefKernel {
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
        float mx = xs[0];
        for (int64_t j = 1; j < n; ++j) mx = xs[j * inner] > mx ? xs[j * inner] : mx;
        double sum = 0.0;
        for (int64_t j = 0; j < n; ++j) {
          const float e = std::exp(xs[j * inner] - mx);
          ys[j * inner] = e;
          sum += e;
        }
        const float r = static_cast<float>(1.0 / sum);
        for (int64_t j = 0; j < n; ++j) ys[j * inner] *= r;
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_softmax(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SoftmaxAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<SoftmaxKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
