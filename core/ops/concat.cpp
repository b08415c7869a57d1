// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Concat along one axis; every other axis broadcasts (numpy rules), which is how a [1,1,C] class token is
// prepended to a [B,N,C] batch (torch.cat((cls.expand(B,-1,-1), x), 1)).
#include "ops/op_registry.h"

namespace vitrt {

Status infer_concat(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<ConcatAttrs>(node.attrs);
  const int rank = src[0]->rank;
  int axis;
  if (!normalize_axis(a.axis, rank, &axis)) return bad_model("Concat: axis out of range for " + src[0]->str());
  Shape out = *src[0];
  int64_t total = 0;
  for (int i = 0; i < num_src; ++i) {
    if (!src[i] || src[i]->rank != rank) return bad_model("Concat: all inputs must have rank " + std::to_string(rank));
    total += (*src[i])[axis];
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      const int64_t v = (*src[i])[d];
      if (v == out[d] || v == 1) continue;
      if (out[d] == 1) {
        out[d] = v;
        continue;
      }
      return bad_model("Concat: input " + src[i]->str() + " does not broadcast with " + out.str());
    }
  }
  out[axis] = total;
  dst[0] = out;
  return Status::Ok();
}

}  // namespace vitrt
