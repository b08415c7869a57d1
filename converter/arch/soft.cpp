// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Placeholder until the SOFT builder lands.
#include "arch/arch.h"

namespace vitrt::convert {

Status build_soft(GraphBuilder&, const Checkpoint&, const ConvertOptions&, ArchInfo*) {
  return unsupported("SOFT checkpoints are not supported by this version of vitrt-convert");
}
Status build_soft_norm(GraphBuilder&, const Checkpoint&, const ConvertOptions&, ArchInfo*) {
  return unsupported("SOFT-Norm checkpoints are not supported by this version of vitrt-convert");
}

}  // namespace vitrt::convert
