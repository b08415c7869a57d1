// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Unary: one elementwise function of UnaryKind (ir/op_attrs.h), in float32. May run in place.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/ref/unary_functions.h"
#include "ops/unary_attrs.h"

namespace vitrt {
namespace ref {
namespace {

template <class F>
void apply_each(const float* src, float* dst, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f(src[i]);
}

class UnaryKernel final : public RefKernel {
 public:
  UnaryKernel(const KernelPlan& plan, const UnaryAttrs& attrs) : RefKernel(plan), a_(attrs) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const float* src = args.src[0]->f32();
    float* dst = args.dst[0]->f32();
    const int64_t n = args.src[0]->numel();
    const float alpha = a_.alpha, beta = a_.beta;
    // One loop per kind, so the kind is decided once per run, not per element.
    switch (a_.kind) {
      case UnaryKind::kSqrt:
        apply_each(src, dst, n, [](float x) { return std::sqrt(x); });
        break;
      case UnaryKind::kErf:
        apply_each(src, dst, n, [](float x) { return std::erf(x); });
        break;
      case UnaryKind::kTanh:
        apply_each(src, dst, n, [](float x) { return std::tanh(x); });
        break;
      case UnaryKind::kSigmoid:
        apply_each(src, dst, n, sigmoid);
        break;
      case UnaryKind::kAbs:
        apply_each(src, dst, n, [](float x) { return std::fabs(x); });
        break;
      case UnaryKind::kNeg:
        apply_each(src, dst, n, [](float x) { return -x; });
        break;
      case UnaryKind::kLog:
        apply_each(src, dst, n, [](float x) { return std::log(x); });
        break;
      case UnaryKind::kReciprocal:
        apply_each(src, dst, n, [](float x) { return 1.0f / x; });
        break;
      case UnaryKind::kFloor:
        apply_each(src, dst, n, [](float x) { return std::floor(x); });
        break;
      case UnaryKind::kCeil:
        apply_each(src, dst, n, [](float x) { return std::ceil(x); });
        break;
      case UnaryKind::kLeakyRelu:
        apply_each(src, dst, n, [alpha](float x) { return leaky_relu(x, alpha); });
        break;
      case UnaryKind::kElu:
        apply_each(src, dst, n, [alpha](float x) { return elu(x, alpha); });
        break;
      case UnaryKind::kHardSigmoid:
        apply_each(src, dst, n, [alpha, beta](float x) { return hard_sigmoid(x, alpha, beta); });
        break;
      case UnaryKind::kHardSwish:
        apply_each(src, dst, n, hard_swish);
        break;
      case UnaryKind::kSoftplus:
        apply_each(src, dst, n, softplus);
        break;
      case UnaryKind::kSilu:
        apply_each(src, dst, n, silu);
        break;
      case UnaryKind::kClip:
        apply_each(src, dst, n, [alpha, beta](float x) { return clamp_nan(x, alpha, beta); });
        break;
      case UnaryKind::kSin:
        apply_each(src, dst, n, [](float x) { return std::sin(x); });
        break;
      case UnaryKind::kCos:
        apply_each(src, dst, n, [](float x) { return std::cos(x); });
        break;
      case UnaryKind::kRound:
        // nearbyint rounds halves to even in the default rounding mode, which the library never changes.
        apply_each(src, dst, n, [](float x) { return std::nearbyint(x); });
        break;
      case UnaryKind::kSign:
        apply_each(src, dst, n, sign);
        break;
      case UnaryKind::kMish:
        apply_each(src, dst, n, mish);
        break;
    }
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
