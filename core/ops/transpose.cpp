// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Transpose: dst dim i = src dim perm[i].
#include "ops/op_registry.h"

namespace vitrt {

Status infer_transpose(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<TransposeAttrs>(node.attrs);
  const Shape& x = *src[0];
  if (static_cast<int>(a.perm.size()) != x.rank) return bad_model("Transpose: perm rank != input rank " + x.str());
  bool seen[kMaxRank] = {};
  Shape out;
  out.rank = x.rank;
  for (int i = 0; i < x.rank; ++i) {
    const int p = a.perm[i];
    if (p < 0 || p >= x.rank || seen[p]) return bad_model("Transpose: perm is not a permutation");
    seen[p] = true;
    out[i] = x[p];
  }
  dst[0] = out;
  return Status::Ok();
}

}  // namespace vitrt
