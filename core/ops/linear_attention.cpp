// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LinearAttention (SOFT): q, v [B,N,C]; landmark conv [d,d,r,r]; landmark LN gamma, beta [d]; V depthwise
// conv [h,1,k,k] (k odd)  ->  [B,N,C]. The token grid height x width must equal N
// (linear_attention_geometry.h).
#include "ops/linear_attention_geometry.h"
#include "ops/op_registry.h"

namespace vitrt {

Status infer_linear_attention(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<LinearAttentionAttrs>(node.attrs);
  LinearAttentionGeometry g;
  Status decoded = decode_linear_attention_geometry(a, src, num_src, &g);
  if (!decoded.ok()) return decoded.with_context("LinearAttention");
  if (a.newton_iterations < 0 || a.newton_iterations > 1000)
    return bad_model("LinearAttention: bad Newton iteration count");
  dst[0] = *src[0];
  return Status::Ok();
}

}  // namespace vitrt
