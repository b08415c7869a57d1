// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Reductions over a set of axes: ReduceMean, ReduceSum and ReduceMax (ReduceMeanAttrs) and Reduce
// (ReduceAttrs, the other ONNX reductions) share one shape rule.
#include <string>

#include "ops/op_registry.h"

namespace vitrt {
namespace {

Status reduced_shape(const char* op, const std::vector<int32_t>& axes, bool keepdims, const Shape& x,
                     Shape* dst) {
  bool reduced[kMaxRank] = {};
  if (axes.empty()) return bad_model(std::string(op) + ": no axes");
  for (int32_t ax : axes) {
    int n;
    if (!normalize_axis(ax, x.rank, &n) || reduced[n])
      return bad_model(std::string(op) + ": bad axis " + std::to_string(ax) + " for " + x.str());
    reduced[n] = true;
  }
  Shape out;
  for (int i = 0; i < x.rank; ++i) {
    if (!reduced[i])
      out.dims[out.rank++] = x[i];
    else if (keepdims)
      out.dims[out.rank++] = 1;
  }
  *dst = out;
  return Status::Ok();
}

}  // namespace

Status infer_reduce_mean(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<ReduceMeanAttrs>(node.attrs);
  return reduced_shape(op_type_name(node.type), a.axes, a.keepdims, *src[0], dst);
}

Status infer_reduce(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<ReduceAttrs>(node.attrs);
  const int kind = static_cast<int>(a.kind);
  if (kind < 0 || kind >= kNumReduceKinds) return bad_model("Reduce: unknown kind " + std::to_string(kind));
  return reduced_shape("Reduce", a.axes, a.keepdims, *src[0], dst);
}

}  // namespace vitrt
