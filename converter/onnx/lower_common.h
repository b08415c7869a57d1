// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What the lowering files share: lower_ops.cpp (the table, linear algebra, normalisation, layout),
// lower_elementwise.cpp (the elementwise ops) and lower_reduce.cpp (the Reduce* ops).
#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/import_context.h"

namespace vitrt::convert::lowering {

struct Entry {
  Status (*fn)(ImportContext& cx, int index, const onnx::NodeProto& n);
  std::set<std::string> attrs;  // the attributes it understands
};

// The IR tensor of input i of `n`: an activation's, or a float constant materialised once.
Status tensor_of(ImportContext& cx, const onnx::NodeProto& n, int i, int32_t* t);

// Adds one IR op reading `inputs` and binds its output to the ONNX value `out_name`.
Status emit(ImportContext& cx, const onnx::NodeProto& n, OpType type, OpAttrs attrs,
            std::vector<int32_t> inputs, const std::string& out_name);

// The entries of the elementwise ops (lower_elementwise.cpp), by ONNX op type.
std::map<std::string, Entry> elementwise_entries();

// The entries of the Reduce* ops (lower_reduce.cpp), by ONNX op type.
std::map<std::string, Entry> reduction_entries();

}  // namespace vitrt::convert::lowering
