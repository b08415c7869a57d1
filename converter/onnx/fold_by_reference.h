// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Generic constant folding of float data (docs/onnx.md, "Folding"): a node whose inputs are all constants
// and that fold_ops.h does not evaluate (integer shape values, data movement) is lowered to IR ops as any
// node is, and the ops it added are run once by the reference backend's kernels on the constants; its
// outputs become constants and the ops leave the graph. The op's arithmetic is thus the IR's own, exactly
// what the reference backend would compute at run time, with no second implementation here.
#include <onnx/onnx_pb.h>

#include <string>

#include "onnx/import_context.h"

namespace vitrt::convert {

// Lowers node `index` (the caller found no fold_ops evaluator or pattern for it). When every input is a
// constant, evaluates what the lowering added and binds the node's outputs as constants (*folded true). A
// result over kMaxFoldedElements elements is not folded: its ops stay in the graph, computed at run time, and
// `log` says so naming the node and the size; so is a node whose reference kernel declines it (the log gives
// the kernel's reason). Errors are the lowering's.
Status lower_or_fold(ImportContext& cx, int index, bool* folded, std::string* log);

}  // namespace vitrt::convert
