// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Exp: e^x elementwise (std::exp, as torch.exp in float32). May run in place.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class ExpKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const float* px = args.src[0]->f32();
    float* py = args.dst[0]->f32();
    const int64_t n = args.src[0]->numel();
    for (int64_t i = 0; i < n; ++i) py[i] = std::exp(px[i]);
    return Status::Ok();
  }
};

}  // namespace

Status create_exp(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  *kernel = std::make_unique<ExpKernel>(plan);
  info->may_inplace = true;
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
