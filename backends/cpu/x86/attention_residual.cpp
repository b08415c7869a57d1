// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// AttentionResidual (LaViT): not yet implemented on x86; declining runs the reference kernel.
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {

Status create_attention_residual(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*, KernelInfo*) {
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
