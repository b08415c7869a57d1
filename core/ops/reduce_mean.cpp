// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ReduceMean, ReduceSum and ReduceMax over a set of axes (the same options and shapes).
#include "ops/op_registry.h"

namespace vitrt {

Status infer_reduce_mean(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<ReduceMeanAttrs>(node.attrs);
  const Shape& x = *src[0];
  bool reduced[kMaxRank] = {};
  if (a.axes.empty()) return bad_model("reduction: no axes");
  for (int32_t ax : a.axes) {
    int n;
    if (!normalize_axis(ax, x.rank, &n) || reduced[n]) return bad_model("reduction: bad axis for " + x.str());
    reduced[n] = true;
  }
  Shape out;
  for (int i = 0; i < x.rank; ++i) {
    if (!reduced[i]) out.dims[out.rank++] = x[i];
    else if (a.keepdims) out.dims[out.rank++] = 1;
  }
  dst[0] = out;
  return Status::Ok();
}

}  // namespace vitrt
