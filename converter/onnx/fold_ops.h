// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Folding at import: the shape machinery of exported graphs (Shape, Size, Constant, ConstantOfShape, Range,
// Gather/Slice/Concat/Unsqueeze/Squeeze/Reshape of shape values, integer and float arithmetic on constants,
// integer Mod, Equal/Where, Not/And/Or/Xor, ScatterND, Cast, EyeLike) is evaluated once while importing, so
// no such op reaches the IR. Shape values may hold the batch (c + k·B, onnx/sym_dim.h); arithmetic that
// cannot stay in that form is refused, naming the node. Float nodes of constants without an evaluator here
// are folded by the reference kernels (onnx/fold_by_reference.h).
#include <onnx/onnx_pb.h>

#include "onnx/import_context.h"

namespace vitrt::convert {

// Folds `n` when every input is a constant (or, for Shape and Size, any value); sets *folded. A node whose
// inputs are constants but whose op is not foldable leaves *folded false (the lowering then decides).
Status fold_node(ImportContext& cx, const onnx::NodeProto& n, bool* folded);

// The op types fold_node evaluates (for docs and the conformance table).
const char* const* foldable_ops();

}  // namespace vitrt::convert
