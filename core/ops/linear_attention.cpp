// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LinearAttention (SOFT): q, v [B,N,C]; landmark conv [d,d,r,r]; landmark LN gamma, beta [d]; V depthwise conv
// [h,1,k,k] (k odd)  ->  [B,N,C]. The token grid height x width must equal N.
#include "ops/op_registry.h"

namespace vitrt {

Status infer_linear_attention(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<LinearAttentionAttrs>(node.attrs);
  const Shape& q = *src[0];
  const Shape& v = *src[1];
  if (q.rank != 3 || v != q) return bad_model("LinearAttention: q and v must be the same [B,N,C], got " + q.str() + " and " + v.str());
  if (a.num_heads < 1 || q[2] % a.num_heads != 0)
    return bad_model("LinearAttention: " + std::to_string(q[2]) + " channels do not split into " + std::to_string(a.num_heads) + " heads");
  if (a.height < 1 || a.width < 1 || static_cast<int64_t>(a.height) * a.width != q[1])
    return bad_model("LinearAttention: token grid " + std::to_string(a.height) + "x" + std::to_string(a.width) +
                     " does not hold " + std::to_string(q[1]) + " tokens");
  const int64_t d = q[2] / a.num_heads, r = a.landmark_ratio;
  if (r < 1 || a.height / r < 1 || a.width / r < 1)
    return bad_model("LinearAttention: landmark ratio " + std::to_string(r) + " leaves no landmark on a " +
                     std::to_string(a.height) + "x" + std::to_string(a.width) + " grid");
  if (*src[2] != Shape{d, d, r, r}) return bad_model("LinearAttention: landmark conv weight must be " + Shape{d, d, r, r}.str() + ", got " + src[2]->str());
  if (*src[3] != Shape{d} || *src[4] != Shape{d}) return bad_model("LinearAttention: landmark LayerNorm parameters must be [" + std::to_string(d) + "]");
  const Shape& vc = *src[5];
  if (vc.rank != 4 || vc[0] != a.num_heads || vc[1] != 1 || vc[2] != vc[3] || vc[2] % 2 == 0)
    return bad_model("LinearAttention: V conv weight must be [" + std::to_string(a.num_heads) + ",1,k,k] with k odd, got " + vc.str());
  if (a.newton_iterations < 0 || a.newton_iterations > 1000) return bad_model("LinearAttention: bad Newton iteration count");
  dst[0] = q;
  return Status::Ok();
}

}  // namespace vitrt
