// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// BatchNorm2d in eval mode: (x - running_mean) / sqrt(running_var + eps) · γ + β, per channel of [B,C,H,W].
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class BatchNorm2dKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const double eps = std::get<BatchNorm2dAttrs>(node_.attrs).eps;
    const TensorRef& x = *args.src[0];
    const float* gamma = args.src[1]->f32();
    const float* beta = args.src[2]->f32();
    const float* mean = args.src[3]->f32();
    const float* var = args.src[4]->f32();
    const int64_t b = x.shape[0], c = x.shape[1], hw = x.shape[2] * x.shape[3];
    for (int64_t n = 0; n < b; ++n) {
      for (int64_t ch = 0; ch < c; ++ch) {
        const float s = static_cast<float>(gamma[ch] / std::sqrt(static_cast<double>(var[ch]) + eps));
        const float m = mean[ch], t = beta[ch];
        const float* xp = x.f32() + (n * c + ch) * hw;
        float* yp = args.dst[0]->f32() + (n * c + ch) * hw;
        for (int64_t i = 0; i < hw; ++i) yp[i] = (xp[i] - m) * s + t;
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_batch_norm2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const BatchNorm2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<BatchNorm2dKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
