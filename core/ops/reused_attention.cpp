// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ReusedAttention (LaViT LA layer): prev_scores [B,h,N,N'], v [B,N',C], theta [N',N'] + [N'], psi [N,N] + [N]
// -> out [B,N,C] and optionally the new scores [B,h,N,N'].
#include "ops/op_registry.h"

namespace vitrt {

Status infer_reused_attention(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<ReusedAttentionAttrs>(node.attrs);
  const Shape& s = *src[0];
  const Shape& v = *src[1];
  if (s.rank != 4 || s[1] != a.num_heads) return bad_model("ReusedAttention: previous scores must be [B," + std::to_string(a.num_heads) + ",N,N'], got " + s.str());
  if (v.rank != 3 || v[0] != s[0] || v[1] != s[3] || v[2] % a.num_heads != 0)
    return bad_model("ReusedAttention: v must be [B,N',C] matching scores " + s.str() + ", got " + v.str());
  const int64_t n = s[2], nk = s[3];
  if (*src[2] != Shape{nk, nk} || *src[3] != Shape{nk})
    return bad_model("ReusedAttention: theta must be [" + std::to_string(nk) + "," + std::to_string(nk) + "] + bias, got " + src[2]->str());
  if (*src[4] != Shape{n, n} || *src[5] != Shape{n})
    return bad_model("ReusedAttention: psi must be [" + std::to_string(n) + "," + std::to_string(n) + "] + bias, got " + src[4]->str() +
                     " (the model was built for another input size)");
  dst[0] = Shape{s[0], n, v[2]};
  if (node.outputs.size() > 1) dst[1] = s;
  return Status::Ok();
}

}  // namespace vitrt
