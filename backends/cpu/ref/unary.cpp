// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Unary: one elementwise function of UnaryKind (ir/op_attrs.h), in float32. May run in place.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/ref/unary_functions.h"
#include "ops/unary_attrs.h"

namespace vitrt {
namespace ref {
namespace {

class UnaryKernel final : public RefKernel {
 public:
  UnaryKernel(const KernelPlan& plan, const UnaryAttrs& attrs) : RefKernel(plan), a_(attrs) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const float* src = args.src[0]->f32();
    float* dst = args.dst[0]->f32();
    const int64_t n = args.src[0]->numel();
    with_unary_function(a_, [&](auto f) {
      for (int64_t i = 0; i < n; ++i) dst[i] = f(src[i]);
    });
    return Status::Ok();
  }

 private:
  UnaryAttrs a_;
};

}  // namespace

Status create_unary(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const UnaryAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const std::string why = unary_attrs_problem(*a);
  if (!why.empty()) return bad_model("Unary '" + plan.node->name + "': " + why);
  *kernel = std::make_unique<UnaryKernel>(plan, *a);
  info->may_inplace = true;
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
