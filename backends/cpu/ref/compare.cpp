// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Compare: dst = 1 where `a kind b` holds, else 0 (float booleans, core/ir/op_attrs.h CompareAttrs), numpy
// broadcasting. C++'s float comparisons are IEEE's: a NaN compares false, and != true.
#include "backends/cpu/ref/binary.h"
#include "backends/cpu/ref/kernels.h"

namespace vitrt {
namespace ref {
namespace {

template <CompareKind kKind>
struct CompareOp {
  float operator()(float a, float b) const {
    bool r = false;
    if constexpr (kKind == CompareKind::kEqual) r = a == b;
    if constexpr (kKind == CompareKind::kLess) r = a < b;
    if constexpr (kKind == CompareKind::kGreater) r = a > b;
    if constexpr (kKind == CompareKind::kLessOrEqual) r = a <= b;
    if constexpr (kKind == CompareKind::kGreaterOrEqual) r = a >= b;
    if constexpr (kKind == CompareKind::kNotEqual) r = a != b;
    return r ? 1.0f : 0.0f;
  }
};

}  // namespace

Status create_compare(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const CompareAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  switch (a->kind) {
    case CompareKind::kEqual:
      return create_binary<CompareOp<CompareKind::kEqual>>(plan, kernel, info);
    case CompareKind::kLess:
      return create_binary<CompareOp<CompareKind::kLess>>(plan, kernel, info);
    case CompareKind::kGreater:
      return create_binary<CompareOp<CompareKind::kGreater>>(plan, kernel, info);
    case CompareKind::kLessOrEqual:
      return create_binary<CompareOp<CompareKind::kLessOrEqual>>(plan, kernel, info);
    case CompareKind::kGreaterOrEqual:
      return create_binary<CompareOp<CompareKind::kGreaterOrEqual>>(plan, kernel, info);
    case CompareKind::kNotEqual:
      return create_binary<CompareOp<CompareKind::kNotEqual>>(plan, kernel, info);
  }
  return bad_model("Compare '" + plan.node->name + "': unknown kind " +
                   std::to_string(static_cast<int>(a->kind)));
}

}  // namespace ref
}  // namespace vitrt
