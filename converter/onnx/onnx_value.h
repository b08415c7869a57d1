// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What an ONNX value name stands for during import: a constant known at import (an initializer, a Constant
// node, or shape machinery folded at import), or an activation of the IR graph being built.
#include <cstdint>
#include <string>
#include <vector>

#include "onnx/sym_dim.h"

namespace vitrt::convert {

enum class ConstKind : int8_t {
  kFloat,  // float32 (float16/double/bfloat16 initializers are converted to float32)
  kInt,    // int64/int32/int8/uint8/bool... as SymDim (shape values may hold the batch)
};

struct OnnxValue {
  bool is_const = false;
  // Constants.
  ConstKind kind = ConstKind::kFloat;
  int32_t onnx_type = 1;       // TensorProto::DataType, for messages and Cast
  std::vector<int64_t> shape;  // static
  std::vector<float> f;        // kFloat
  std::vector<SymDim> i;       // kInt
  int32_t ir_constant = -1;    // the IR constant made from it, once an op reads it
  // Activations.
  int32_t tensor = -1;       // IR tensor index
  std::vector<SymDim> dims;  // symbolic shape
  // An ONNX bool computed by a comparison or logical op, held as float 0/1 (docs/onnx.md); never a graph
  // output.
  bool boolean = false;
  // The result of an Expand the IR cannot compute on its own: `expanded` is its shape, the IR tensor is the
  // unexpanded source. Only Concat (which broadcasts every axis but its own) may read it: an Expand read by
  // anything else becomes the IR's Expand op where it can (not where it broadcasts to the batch).
  bool pending_expand = false;
  std::vector<SymDim> expanded;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  int rank() const { return static_cast<int>(is_const ? shape.size() : dims.size()); }
};

std::string sym_dims_str(const std::vector<SymDim>& d);
std::string int_dims_str(const std::vector<int64_t>& d);

}  // namespace vitrt::convert
