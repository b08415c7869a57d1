// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Reduce: ReduceAttrs' kind picks one of the reductions of backends/cpu/ref/reduce.h.
#include "backends/cpu/ref/reduce.h"

#include <string>

namespace vitrt {
namespace ref {

Status create_reduce(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const ReduceAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  switch (a->kind) {
    case ReduceKind::kMin:
      return create_reduce_kernel<Reduction::kMin, ReduceAttrs>(plan, kernel);
    case ReduceKind::kProd:
      return create_reduce_kernel<Reduction::kProd, ReduceAttrs>(plan, kernel);
    case ReduceKind::kL1:
      return create_reduce_kernel<Reduction::kL1, ReduceAttrs>(plan, kernel);
    case ReduceKind::kL2:
      return create_reduce_kernel<Reduction::kL2, ReduceAttrs>(plan, kernel);
    case ReduceKind::kSumSquare:
      return create_reduce_kernel<Reduction::kSumSquare, ReduceAttrs>(plan, kernel);
    case ReduceKind::kLogSum:
      return create_reduce_kernel<Reduction::kLogSum, ReduceAttrs>(plan, kernel);
    case ReduceKind::kLogSumExp:
      return create_reduce_kernel<Reduction::kLogSumExp, ReduceAttrs>(plan, kernel);
  }
  return bad_model("Reduce '" + plan.node->name + "': unknown kind " +
                   std::to_string(static_cast<int>(a->kind)));
}

}  // namespace ref
}  // namespace vitrt
