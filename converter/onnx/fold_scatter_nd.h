// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// ScatterND of constants, folded at import (docs/onnx.md): torchvision's Swin builds its shifted-window
// attention mask by assigning slices of a zeros tensor, which torch.onnx exports as ScatterND chains on
// constants. Data movement only, so float and integer (shape) values alike.
#include <onnx/onnx_pb.h>

#include "onnx/import_context.h"

namespace vitrt::convert {

// out = data with updates written at indices (ONNX ScatterND, reduction 'none'; a later index tuple
// overwrites an earlier equal one, as ONNX's reference implementation does). Malformed shapes or indices
// out of range are bad_input naming the node; other reductions are unsupported.
Status fold_scatter_nd(ImportContext& cx, const onnx::NodeProto& n, const OnnxValue& data,
                       const OnnxValue& indices, const OnnxValue& updates, OnnxValue* out);

}  // namespace vitrt::convert
