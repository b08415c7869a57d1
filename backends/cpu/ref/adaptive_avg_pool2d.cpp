// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// AdaptiveAvgPool2d as PyTorch: output cell (i, j) averages rows [floor(i·H/oh), ceil((i+1)·H/oh)) and columns
// [floor(j·W/ow), ceil((j+1)·W/ow)); the sum is taken in double.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class AdaptiveAvgPool2dKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    const int64_t planes = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t oh = y.shape[2], ow = y.shape[3];
    for (int64_t p = 0; p < planes; ++p) {
      const float* src = x.f32() + p * h * w;
      float* dst = y.f32() + p * oh * ow;
      for (int64_t i = 0; i < oh; ++i) {
        const int64_t r0 = i * h / oh, r1 = ((i + 1) * h + oh - 1) / oh;
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t c0 = j * w / ow, c1 = ((j + 1) * w + ow - 1) / ow;
          double sum = 0;
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t c = c0; c < c1; ++c) sum += src[r * w + c];
          dst[i * ow + j] = static_cast<float>(sum / static_cast<double>((r1 - r0) * (c1 - c0)));
        }
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_adaptive_avg_pool2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  *kernel = std::make_unique<AdaptiveAvgPool2dKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
