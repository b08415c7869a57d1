// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Placeholder until the kernel lands: reports the op as unsupported.
#include "backends/cpu/ref/kernels.h"

namespace vitrt {
namespace ref {

Status create_reused_attention(const KernelPlan& plan, std::unique_ptr<Kernel>*, KernelInfo*) {
  return unsupported(std::string(op_type_name(plan.node->type)) + ": no reference kernel yet");
}

}  // namespace ref
}  // namespace vitrt
