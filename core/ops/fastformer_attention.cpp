// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// FastformerAttention: q, k [B,N,C]; query_att weight [h,C], bias [h]; key_att weight [h,C], bias [h]
// -> [B,N,C] (core/ir/op_attrs.h, FastformerAttentionAttrs).
#include <cmath>
#include <string>

#include "ops/fastformer_attention_geometry.h"
#include "ops/op_registry.h"

namespace vitrt {

Status decode_fastformer_geometry(const FastformerAttentionAttrs& a, const Shape* const* src, int num_src,
                                  FastformerGeometry* out) {
  if (num_src != 6) return bad_model("expects 6 inputs, got " + std::to_string(num_src));
  for (int i = 0; i < 6; ++i)
    if (!src[i]) return bad_model("input " + std::to_string(i) + " is missing");
  if (!(std::isfinite(a.scale) && a.scale > 0.0f))
    return bad_model("scale " + std::to_string(a.scale) + " (finite, > 0)");
  const Shape& q = *src[0];
  const Shape& k = *src[1];
  if (q.rank != 3 || k != q)
    return bad_model("q and k must be the same [B,N,C], got " + q.str() + " and " + k.str());
  if (q[1] < 1) return bad_model("no tokens in " + q.str() + " (softmax over tokens)");
  if (a.heads < 1 || q[2] % a.heads != 0)
    return bad_model(std::to_string(q[2]) + " channels do not split into " + std::to_string(a.heads) +
                     " heads");
  const Shape weight{a.heads, q[2]}, bias{a.heads};
  if (*src[2] != weight || *src[4] != weight)
    return bad_model("query_att and key_att weights must be " + weight.str() + ", got " + src[2]->str() +
                     " and " + src[4]->str());
  if (*src[3] != bias || *src[5] != bias)
    return bad_model("query_att and key_att biases must be " + bias.str() + ", got " + src[3]->str() +
                     " and " + src[5]->str());
  FastformerGeometry g{};
  g.batch = q[0];
  g.n = q[1];
  g.c = q[2];
  g.heads = a.heads;
  g.d = g.c / g.heads;
  *out = g;
  return Status::Ok();
}

Status infer_fastformer_attention(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<FastformerAttentionAttrs>(node.attrs);
  FastformerGeometry g;
  Status decoded = decode_fastformer_geometry(a, src, num_src, &g);
  if (!decoded.ok()) return decoded.with_context("FastformerAttention");
  dst[0] = *src[0];
  return Status::Ok();
}

}  // namespace vitrt
