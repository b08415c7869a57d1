// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Gelu, erf or tanh form (torch.nn.functional.gelu, approximate='none' | 'tanh'). May run in place.
#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class GeluKernel final : public RefKernel {
 public:
  GeluKernel(const KernelPlan& plan, Activation act) : RefKernel(plan), act_(act) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    const float* px = x.f32();
    float* py = y.f32();
    const int64_t n = x.numel();
    if (act_ == Activation::kGeluTanh) {
      for (int64_t i = 0; i < n; ++i) py[i] = gelu_tanh(px[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) py[i] = gelu_erf(px[i]);
    }
    return Status::Ok();
  }

 private:
  Activation act_;
};

}  // namespace

Status create_gelu(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const GeluAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  if (a->approximation != GeluApproximation::kErf && a->approximation != GeluApproximation::kTanh)
    return bad_model("Gelu '" + plan.node->name + "': unknown approximation");
  *kernel = std::make_unique<GeluKernel>(
      plan, a->approximation == GeluApproximation::kTanh ? Activation::kGeluTanh : Activation::kGeluErf);
  info->may_inplace = true;
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
