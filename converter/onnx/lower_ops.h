// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// ONNX op -> IR ops, for the ops the IR has today (core/ir/op_type.h). One entry per ONNX op type with the
// attributes it understands; any other attribute, or a form the IR cannot express, is an unsupported error
// naming the node, op type, opset and what is missing.
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onnx/import_context.h"

namespace vitrt::convert {

// Lowers node `index` of the ONNX graph (its inputs are known values); binds its outputs.
Status lower_node(ImportContext& cx, int index);

// The ONNX op types lower_node maps (for docs and the conformance runner).
std::vector<std::string> lowered_ops();

}  // namespace vitrt::convert
