// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// TopK (docs/onnx.md) becomes the IR's TopK with its two outputs, values and indices; the indices are float32
// values (exact: the axis holds at most 2^24 elements), as ArgMax's are. k, ONNX's second input, must be one
// integer known at import. `sorted` 0 leaves the order of the k results open in ONNX: vitrt returns them
// sorted, as for `sorted` 1. Equal values come out lower index first.
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_top_k(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *k;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &k));
  const int rank = x->rank();
  if (rank < 1) return cx.bad_node(n, "a scalar input has no axis to select along");
  TopKAttrs a;
  int ax = 0;
  VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, cx.attr_int(n, "axis", -1), rank, &ax));
  a.axis = ax;
  for (const char* flag : {"largest", "sorted"}) {
    const int64_t v = cx.attr_int(n, flag, 1);
    if (v != 0 && v != 1)
      return cx.bad_node(n, std::string(flag) + " " + std::to_string(v) + ", expected 0 or 1");
  }
  a.largest = cx.attr_int(n, "largest", 1) == 1;
  if (!k->is_const)
    return cx.unsupported_node(n, "k is computed from data, not known at import (it must be a constant)");
  if (k->kind != ConstKind::kInt || k->numel() != 1)
    return cx.bad_node(n, "k must be one integer (an int64 tensor of one element), got " +
                              std::string(k->kind == ConstKind::kInt ? "integers" : "floats") + " of shape " +
                              int_dims_str(k->shape));
  if (!k->i[0].is_static()) return cx.unsupported_node(n, "k depends on the batch size");
  a.k = k->i[0].c;
  const std::vector<SymDim> dims = dims_of(*x);
  if (!dims[ax].is_static()) return cx.unsupported_node(n, "selects along the batch axis");
  if (a.k < 1 || a.k > dims[ax].c)
    return cx.bad_node(n, "k " + std::to_string(a.k) + " is not in [1, " + std::to_string(dims[ax].c) +
                              "], the length of axis " + std::to_string(ax));
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  const std::string values = n.output(0);
  const std::string indices = n.output_size() > 1 && !n.output(1).empty() ? n.output(1) : values + ".indices";
  std::vector<OnnxValue> outs;
  VITRT_RETURN_IF_ERROR(cx.add_op_outputs(n, OpType::kTopK, a, {t}, {values, indices}, &outs));
  cx.set(values, std::move(outs[0]));
  cx.set(indices, std::move(outs[1]));
  return Status::Ok();
}

}  // namespace

std::map<std::string, Entry> top_k_entries() {
  return {{"TopK", {lower_top_k, {"axis", "largest", "sorted"}}}};
}

}  // namespace vitrt::convert::lowering
