// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Per-op schema: name, arity, supported versions, origin and shape inference, one row per line of the op
// table (ops/op_list.h). Each op's inference lives in its own file in this folder (ops/<op>.cpp); its
// reference kernel is backends/cpu/ref/<op>.cpp.
#include "common/status.h"
#include "ir/graph.h"

namespace vitrt {

// src[i] is nullptr for an absent optional input. Writes dst[0..num_outputs). Must not allocate: it also runs
// during Session::run when the batch changes.
using InferShapeFn = Status (*)(const Node& node, const Shape* const* src, int num_src, Shape* dst);

struct OpSchema {
  OpType type;
  const char* name;
  int min_inputs;
  int max_inputs;
  int min_outputs;
  int max_outputs;
  int32_t max_version;  // versions 1..max_version are understood
  OpOrigin origin;
  InferShapeFn infer;
};

// nullptr for an unknown type.
const OpSchema* find_op_schema(OpType type);

// Checks arity and version, then infers. `where` names the node in messages.
Status infer_node_shapes(const Node& node, const Shape* const* src, int num_src, Shape* dst);

// Describes a node for messages: "op #12 Linear 'blocks.0.attn.qkv'".
std::string describe_node(const Node& node, size_t index);

// Numpy-style broadcast of two shapes; false when incompatible.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out);

// Output length of a convolution along one axis (symmetric zero padding `pad` on each side), in checked
// int64; false when an argument is out of range, the arithmetic overflows or the dilated kernel does not fit.
bool conv_output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation,
                      int64_t* out);

// Output length of a pooling window along one axis (core/ir/op_attrs.h, Pool2dAttrs), in checked int64; false
// when an argument is out of range, the arithmetic overflows or the dilated window does not fit the padded
// input.
bool pool_output_size(int64_t in, int64_t kernel, int64_t pad_begin, int64_t pad_end, int64_t stride,
                      int64_t dilation, bool ceil_mode, int64_t* out);

// Output length of a transposed convolution along one axis (core/ir/op_attrs.h, ConvTransposeAttrs):
// (in − 1)·stride − pad_begin − pad_end + (kernel − 1)·dilation + 1 + output_padding, in checked int64; false
// when an argument is out of range, the arithmetic overflows or the result is below 1.
bool conv_transpose_output_size(int64_t in, int64_t kernel, int64_t pad_begin, int64_t pad_end,
                                int64_t stride, int64_t dilation, int64_t output_padding, int64_t* out);

// The elements x[start:end:step] of an axis of length n keeps (core/ir/op_attrs.h, SliceAttrs): the index
// of the first and how many; false when the range is empty, n < 1 or the step is 0 or INT64_MIN.
bool slice_range(int64_t n, const SliceAttrs& a, int64_t* first, int64_t* count);

// The lowest version of its op that states what `type` with `attrs` computes: 2 for a Slice whose step is not
// 1, else 1. Whoever builds a node sets Node::version to it, so a reader that knows only version 1 refuses
// the file instead of ignoring the step (docs/format.md).
int32_t lowest_op_version(OpType type, const OpAttrs& attrs);

// Normalises a possibly negative axis into [0, rank); false when out of range.
bool normalize_axis(int64_t axis, int rank, int* out);

// Shape inference functions, declared from the op table (one per op file; ops may share one).
#define VITRT_DECLARE_INFER(name, attrs, infer, ...) \
  Status infer(const Node&, const Shape* const*, int, Shape*);
VITRT_OP_LIST(VITRT_DECLARE_INFER)
#undef VITRT_DECLARE_INFER

}  // namespace vitrt
