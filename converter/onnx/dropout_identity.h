// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// When an ONNX Dropout is the identity at inference (docs/onnx.md), for both the folding of constants
// (fold_ops.cpp) and the lowering of activations (lower_ops.cpp).
#include <onnx/onnx_pb.h>

#include "onnx/import_context.h"

namespace vitrt::convert {

// Ok when Dropout `n` passes its input through unchanged: training_mode absent or a constant false, or a
// constant true with a ratio of exactly 0 (nothing is dropped and the scale 1/(1 - 0) is 1; torch.onnx writes
// F.dropout(x, p=0.0, training=True) so, as torchvision's Swin does). Its mask output must not be read.
// Otherwise an unsupported error naming the node.
Status check_dropout_identity(ImportContext& cx, const onnx::NodeProto& n);

}  // namespace vitrt::convert
