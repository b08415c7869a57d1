// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// `vitrt-convert --emit primitive`: the fused attention ops written as the plain ops PyTorch runs (reshape,
// permute, unbind, matmul, scale, softmax, ...), in PyTorch's order, so that the planner's fuse_attention
// pass has to find them again (engine/src/planner/passes/fuse_attention.cpp matches exactly these forms).
#include <string>
#include <vector>

#include "arch/graph_builder.h"

namespace vitrt::convert {

// Emits `type` with `inputs` as primitive ops through `b`; the results are named `output_names` (the first is
// the fused op's output). Returns false, emitting nothing, for op types that keep their fused form.
bool emit_primitive(GraphBuilder& b, OpType type, const OpAttrs& attrs, const std::vector<int32_t>& inputs,
                    const std::string& name, const std::vector<std::string>& output_names,
                    std::vector<int32_t>* outputs);

}  // namespace vitrt::convert
