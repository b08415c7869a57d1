// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Reading an ONNX ModelProto from a file with the hostile-input limits of onnx_limits.h, and telling an ONNX
// file apart from a checkpoint by its content.
#include <onnx/onnx_pb.h>

#include <string>

#include "common/status.h"

namespace vitrt::convert {

// Whether the first bytes of the file look like an ONNX ModelProto (a protobuf message whose first field is
// one of ModelProto's, with the right wire type) rather than a torch.save zip or a safetensors file. A cheap
// sniff: read_onnx_model decides.
bool looks_like_onnx(const std::string& path);
bool looks_like_onnx_bytes(const uint8_t* data, size_t size);

// Parses `path` (a regular file of at most kMaxOnnxFileBytes) into `model`, with protobuf's recursion and
// total-byte limits; then checks the default-domain opset (kMinOnnxOpset..kMaxOnnxOpset) and that no other
// domain is imported. bad_input naming what is wrong.
Status read_onnx_model(const std::string& path, onnx::ModelProto* model);
// The same from memory (the fuzzer, tests); `name` is used in messages.
Status parse_onnx_model(const uint8_t* data, size_t size, const std::string& name, onnx::ModelProto* model);

// The default-domain opset the model imports (checked by read/parse_onnx_model).
int64_t onnx_opset(const onnx::ModelProto& model);

// How messages name a node: "node 'NAME' (OpType, opset N)", NAME its first output where it has no name.
std::string onnx_node_where(const onnx::NodeProto& n, int64_t opset);

}  // namespace vitrt::convert
