// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ReduceSum over a set of axes (backends/cpu/ref/reduce.h).
#include "backends/cpu/ref/reduce.h"

namespace vitrt {
namespace ref {

Status create_reduce_sum(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  return create_reduce_kernel<Reduction::kSum>(plan, kernel);
}

}  // namespace ref
}  // namespace vitrt
