// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ScatterND (ONNX ScatterND; core/ir/op_attrs.h, ScatterNDAttrs): data [d0..dr-1], index tuples [..., k] as
// float32 values with 1 <= k <= r, updates [indices' shape without its last axis, d_k..d_r-1]. The output
// has data's shape.
#include <string>

#include "ops/op_registry.h"

namespace vitrt {

Status infer_scatter_nd(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<ScatterNDAttrs>(node.attrs);
  const int reduction = static_cast<int>(a.reduction);
  if (reduction < 0 || reduction >= kNumScatterReductions)
    return bad_model("ScatterND: reduction " + std::to_string(reduction) + " is not one of none, add, mul, " +
                     "max, min");
  const Shape &x = *src[0], &idx = *src[1], &upd = *src[2];
  const int64_t k = idx.rank >= 1 ? idx.dim(-1) : 0;
  if (idx.rank < 1 || k < 1 || k > x.rank)
    return bad_model("ScatterND: indices " + idx.str() + " must end in an axis from 1 to the rank of data " +
                     x.str());
  // Index values are float32: exact for axes of at most 2^24 elements.
  for (int d = 0; d < k; ++d)
    if (x[d] > (int64_t{1} << 24))
      return bad_model("ScatterND: axis " + std::to_string(d) + " of data " + x.str() +
                       " is longer than 2^24, beyond exact float32 indices");
  // updates: the indices' shape without its last axis, then data's shape from axis k on.
  bool match = upd.rank == idx.rank - 1 + x.rank - k;
  for (int d = 0; match && d < idx.rank - 1; ++d) match = upd[d] == idx[d];
  for (int d = static_cast<int>(k); match && d < x.rank; ++d) match = upd[idx.rank - 1 + d - k] == x[d];
  if (!match)
    return bad_model("ScatterND: updates " + upd.str() + " do not have the shape of indices " + idx.str() +
                     " without its last axis followed by data " + x.str() + " from axis " +
                     std::to_string(k));
  dst[0] = x;
  return Status::Ok();
}

}  // namespace vitrt
