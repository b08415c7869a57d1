// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Placeholder until the LaViT builder lands.
#include "arch/arch.h"

namespace vitrt::convert {

Status build_lavit(GraphBuilder&, const Checkpoint&, const ConvertOptions&, ArchInfo*) {
  return unsupported("LaViT checkpoints are not supported by this version of vitrt-convert");
}

}  // namespace vitrt::convert
