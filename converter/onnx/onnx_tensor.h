// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// ONNX TensorProto -> constant OnnxValue: checked sizes, raw or typed storage, float16/bfloat16/double
// widened or narrowed to float32, integers and booleans as SymDim, and external data read safely from a file
// next to the model.
#include <onnx/onnx_pb.h>

#include <string>

#include "common/status.h"
#include "onnx/onnx_value.h"

namespace vitrt::convert {

// Where external data files may be: the model's directory ("" when the model came from memory, which then
// has no external data). Counts the bytes read from them against kMaxExternalBytes.
struct ExternalDataContext {
  std::string model_dir;
  uint64_t bytes_read = 0;
};

// `what` names the tensor in messages ("initializer 'w'", "attribute 'value' of node 'c'").
Status tensor_to_value(const onnx::TensorProto& t, const std::string& what, ExternalDataContext* ext,
                       OnnxValue* out);

// Frees the tensor's data (raw and typed; its memory, not just its size), keeping its name, type and dims:
// for a caller done with the values tensor_to_value made.
void release_tensor_data(onnx::TensorProto* t);

// The path of an external data file `location` inside `model_dir`, or why it is refused: an absolute path,
// a `..` component, an empty name, or a path that (after resolving symlinks) leaves the directory.
Status resolve_external_path(const std::string& model_dir, const std::string& location, std::string* path);

// "FLOAT", "INT64", ... for messages.
std::string onnx_type_name(int32_t type);

}  // namespace vitrt::convert
