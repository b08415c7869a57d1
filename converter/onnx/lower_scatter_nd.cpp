// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ScatterND (docs/onnx.md) on run-time data or updates becomes the IR's ScatterND with its index tuples as a
// float32 constant: vitrt computes in float32, so the indices must be known at import (an int64 initializer
// or Constant), where negative ones are wrapped and any outside [-n, n) is refused, naming the node and the
// index. The axes the tuples address must not depend on the batch. ScatterND of constants only is folded
// (fold_scatter_nd.cpp) before it reaches this.
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_scatter_nd(ImportContext& cx, int, const NodeProto& n) {
  if (n.input_size() != 3) return cx.bad_node(n, "needs 3 inputs (data, indices, updates)");
  OnnxValue *x, *ix, *upd;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &ix));
  VITRT_RETURN_IF_ERROR(cx.input(n, 2, &upd));
  const std::string reduction = cx.attr_string(n, "reduction", "none");
  ScatterNDAttrs a;
  if (reduction == "add")
    a.reduction = ScatterReduction::kAdd;
  else if (reduction == "mul")
    a.reduction = ScatterReduction::kMul;
  else if (reduction == "max")
    a.reduction = ScatterReduction::kMax;
  else if (reduction == "min")
    a.reduction = ScatterReduction::kMin;
  else if (reduction != "none")
    return cx.bad_node(n, "reduction '" + reduction + "', expected none, add, mul, max or min");
  if ((x->is_const && x->kind != ConstKind::kFloat) || (upd->is_const && upd->kind != ConstKind::kFloat))
    return cx.unsupported_node(n, "integer data or updates with data computed at run time (float32 only)");
  if (!ix->is_const)
    return cx.unsupported_node(
        n,
        "indices computed from data: vitrt computes in float32, so the indices must be a constant known "
        "at import");
  if (ix->kind != ConstKind::kInt) return cx.bad_node(n, "indices must be integers");
  const std::vector<SymDim> dims = dims_of(*x);
  const int rank = static_cast<int>(dims.size());
  const std::vector<int64_t>& is = ix->shape;
  const int64_t k = is.empty() ? 0 : is.back();
  if (is.empty() || k < 1 || k > rank)
    return cx.bad_node(n, "indices " + int_dims_str(is) + " must end in an axis from 1 to the rank " +
                              std::to_string(rank) + " of data " + sym_dims_str(dims));
  for (int64_t d = 0; d < k; ++d) {
    if (!dims[d].is_static())
      return cx.unsupported_node(n, "the indices address axis " + std::to_string(d) + " of data " +
                                        sym_dims_str(dims) + ", whose length depends on the batch");
    if (dims[d].c > (int64_t{1} << 24))
      return cx.unsupported_node(n, "axis " + std::to_string(d) + " of data " + sym_dims_str(dims) +
                                        " is longer than 2^24 (float32 indices are exact to 2^24)");
  }
  // updates: the indices' shape without its last axis, then data's shape from axis k on.
  std::vector<SymDim> want;
  for (size_t d = 0; d + 1 < is.size(); ++d) want.push_back(SymDim::of(is[d]));
  want.insert(want.end(), dims.begin() + k, dims.end());
  if (dims_of(*upd) != want)
    return cx.bad_node(n, "updates are " + sym_dims_str(dims_of(*upd)) + ", expected " + sym_dims_str(want) +
                              " for indices " + int_dims_str(is) + " and data " + sym_dims_str(dims));
  std::vector<float> values;
  values.reserve(ix->i.size());
  for (size_t e = 0; e < ix->i.size(); ++e) {
    const SymDim v = ix->i[e];
    const int64_t len = dims[e % k].c;
    if (!v.is_static()) return cx.unsupported_node(n, "an index depends on the batch size");
    if (v.c < -len || v.c >= len)
      return cx.bad_node(n, "index " + std::to_string(v.c) + " (tuple " + std::to_string(e / k) + ", axis " +
                                std::to_string(e % k) + ") is out of range for data " + sym_dims_str(dims));
    values.push_back(static_cast<float>(v.c < 0 ? v.c + len : v.c));
  }
  int32_t t, u;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 2, &u));
  const int32_t indices = cx.add_constant(n.output(0) + ".indices", is, std::move(values));
  return emit(cx, n, OpType::kScatterND, a, {t, indices, u}, n.output(0));
}

}  // namespace

std::map<std::string, Entry> scatter_nd_entries() {
  return {{"ScatterND", {lower_scatter_nd, {"reduction"}}}};
}

}  // namespace vitrt::convert::lowering
