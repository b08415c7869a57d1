// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// GatherElements (docs/onnx.md) becomes the IR's GatherElements with its indices as a float32 constant: vitrt
// computes in float32, so the indices must be known at import (an int64/int32 initializer or Constant), where
// negative ones are wrapped (ONNX counts them from the axis' end) and any outside [-n, n) is refused, naming
// the node. Indices computed from data are not supported. The data's shape must not depend on the batch (the
// indices' constant shape is the output's).
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_gather_elements(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *ix;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &ix));
  const std::vector<SymDim> dims = dims_of(*x);
  const int rank = static_cast<int>(dims.size());
  if (rank < 1) return cx.bad_node(n, "scalar data has no axis to gather along");
  int ax = 0;
  VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, cx.attr_int(n, "axis", 0), rank, &ax));
  if (!ix->is_const)
    return cx.unsupported_node(
        n,
        "indices computed from data: vitrt computes in float32, so the indices must be "
        "a constant known at import");
  if (ix->kind != ConstKind::kInt) return cx.bad_node(n, "indices must be integers");
  if (static_cast<int>(ix->shape.size()) != rank)
    return cx.bad_node(n, "indices of shape " + int_dims_str(ix->shape) + " for data of rank " +
                              std::to_string(rank) + " (the ranks must be equal)");
  for (int d = 0; d < rank; ++d)
    if (!dims[d].is_static())
      return cx.unsupported_node(n, "data of shape " + sym_dims_str(dims) +
                                        " depends on the batch, and the indices' constant shape cannot");
  const int64_t len = dims[ax].c;
  for (int d = 0; d < rank; ++d)
    if (d != ax && ix->shape[d] > dims[d].c)
      return cx.bad_node(n, "indices of shape " + int_dims_str(ix->shape) + " exceed data " +
                                sym_dims_str(dims) + " on axis " + std::to_string(d));
  if (len > (int64_t{1} << 24))
    return cx.unsupported_node(
        n, "an axis of " + std::to_string(len) + " elements (float32 indices are exact to 2^24)");
  std::vector<float> values;
  values.reserve(ix->i.size());
  for (size_t e = 0; e < ix->i.size(); ++e) {
    const SymDim v = ix->i[e];
    if (!v.is_static()) return cx.unsupported_node(n, "indices depend on the batch size");
    if (v.c < -len || v.c >= len)
      return cx.bad_node(n, "index " + std::to_string(v.c) + " (element " + std::to_string(e) +
                                ") is out of range for an axis of " + std::to_string(len));
    values.push_back(static_cast<float>(v.c < 0 ? v.c + len : v.c));
  }
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  const int32_t indices = cx.add_constant(n.output(0) + ".indices", ix->shape, std::move(values));
  return emit(cx, n, OpType::kGatherElements, GatherElementsAttrs{ax}, {t, indices}, n.output(0));
}

}  // namespace

std::map<std::string, Entry> gather_elements_entries() {
  return {{"GatherElements", {lower_gather_elements, {"axis"}}}};
}

}  // namespace vitrt::convert::lowering
