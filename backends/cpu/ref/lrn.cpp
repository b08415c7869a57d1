// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LRN (core/ir/op_attrs.h, LrnAttrs) as ONNX's numpy reference computes it in float32: at each position, the
// squares of the window's channels summed in channel order, then x / (bias + (alpha/size)·sum)^beta with
// alpha/size rounded once. One (batch item, channel) plane at a time, the window's planes read per element.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class LrnKernel final : public RefKernel {
 public:
  LrnKernel(const KernelPlan& plan, const LrnAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const int64_t batch = x.shape[0], channels = x.shape[1];
    int64_t plane = 1;
    for (int d = 2; d < x.shape.rank; ++d) plane *= x.shape[d];
    const int64_t before = (a_.size - 1) / 2, after = a_.size / 2;  // floor and ceil of (size - 1) / 2
    const float scale = a_.alpha / static_cast<float>(a_.size);
    const float* src = x.f32();
    float* dst = args.dst[0]->f32();
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t lo = c - before < 0 ? 0 : c - before;
        const int64_t hi = c + after > channels - 1 ? channels - 1 : c + after;
        const float* image = src + n * channels * plane;
        float* out = dst + (n * channels + c) * plane;
        for (int64_t p = 0; p < plane; ++p) {
          float sum = 0.0f;
          for (int64_t k = lo; k <= hi; ++k) {
            const float v = image[k * plane + p];
            sum += v * v;
          }
          out[p] = image[c * plane + p] / std::pow(a_.bias + scale * sum, a_.beta);
        }
      }
    return Status::Ok();
  }

 private:
  LrnAttrs a_;
};

}  // namespace

Status create_lrn(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const LrnAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<LrnKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
