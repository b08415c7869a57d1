// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// GatherND of constants, folded at import (docs/onnx.md): torchvision's Swin V2 indexes the relative position
// bias table its continuous-position MLP computes from constants (`table[index]`), which the dynamo exporter
// writes as GatherND. Data movement only, so float and integer (shape) values alike.
#include <onnx/onnx_pb.h>

#include "onnx/import_context.h"

namespace vitrt::convert {

// out[t, ...] = data[indices[t, 0], ..., indices[t, k-1], ...] (ONNX GatherND, batch_dims 0; negative
// indices count from the end). Malformed shapes or indices out of range are bad_input naming the node; an
// output over the folded-constant limit or batch_dims other than 0 is unsupported.
Status fold_gather_nd(ImportContext& cx, const onnx::NodeProto& n, const OnnxValue& data,
                      const OnnxValue& indices, OnnxValue* out);

}  // namespace vitrt::convert
