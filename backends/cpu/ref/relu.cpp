// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Relu: max(x, 0), NaN propagating as torch.relu. May run in place.
#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class ReluKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const float* px = args.src[0]->f32();
    float* py = args.dst[0]->f32();
    const int64_t n = args.src[0]->numel();
    for (int64_t i = 0; i < n; ++i) py[i] = relu(px[i]);
    return Status::Ok();
  }
};

}  // namespace

Status create_relu(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  *kernel = std::make_unique<ReluKernel>(plan);
  info->may_inplace = true;
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
