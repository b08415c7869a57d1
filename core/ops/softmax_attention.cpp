// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SoftmaxAttention: per head h, softmax(q_h·k_hᵀ·scale)·v_h, heads split head-major, merged back to [B,Nq,C].
// Inputs depend on AttentionInputs (decoded in softmax_attention_layout.h): (q,k,v) | (qkv) | (q,kv).
// Keys/values may have fewer tokens than queries (spatial-reduction attention). Optional extra inputs add a
// bias [B,h,Nq,Nk] or [1,h,Nq,Nk] and then a mask [nW,Nq,Nk] to the scaled scores (decoded in
// softmax_attention_layout.h); an optional second output receives the final pre-softmax scores [B,h,Nq,Nk].
// With scale_on_q (version 2) the scale multiplies q before the product; qk_norm and head_scales (version 3)
// make it cosine attention (ir/op_attrs.h).
#include <cmath>
#include <string>

#include "ops/op_registry.h"
#include "ops/softmax_attention_layout.h"

namespace vitrt {

Status infer_softmax_attention(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<SoftmaxAttentionAttrs>(node.attrs);
  const int want = softmax_attention_layout_inputs(a.inputs);
  if (a.scale_on_q && node.version < 2)
    return bad_model("SoftmaxAttention: scale_on_q needs op version 2 (this node is version " +
                     std::to_string(node.version) + ")");
  if ((a.qk_norm || !a.head_scales.empty()) && node.version < 3)
    return bad_model("SoftmaxAttention: qk_norm and head_scales need op version 3 (this node is version " +
                     std::to_string(node.version) + ")");
  if (a.qk_norm && !(std::isfinite(a.qk_norm_eps) && a.qk_norm_eps >= 0.0f))
    return bad_model("SoftmaxAttention: qk_norm_eps must be finite and >= 0, got " +
                     std::to_string(a.qk_norm_eps));
  if (!a.head_scales.empty()) {
    if (a.head_scales.size() != static_cast<size_t>(a.num_heads))
      return bad_model("SoftmaxAttention: head_scales must hold num_heads (" + std::to_string(a.num_heads) +
                       ") values, got " + std::to_string(a.head_scales.size()));
    if (a.scale != 1.0f || a.scale_on_q)
      return bad_model("SoftmaxAttention: head_scales replace the scale, which must be 1 without scale_on_q");
    for (float s : a.head_scales)
      if (!std::isfinite(s)) return bad_model("SoftmaxAttention: head_scales must be finite");
  }
  SoftmaxAttentionLayout l;
  Status decoded = decode_softmax_attention_layout(a, src, num_src, &l);
  if (!decoded.ok()) return decoded.with_context("SoftmaxAttention");
  SoftmaxAttentionTerms terms;
  decoded = decode_softmax_attention_terms(l, want, src, num_src, &terms);
  if (!decoded.ok()) return decoded.with_context("SoftmaxAttention");
  const Shape scores{l.batch, l.heads, l.nq, l.nk};
  dst[0] = Shape{l.batch, l.nq, l.c};
  if (node.outputs.size() > 1) dst[1] = scores;
  return Status::Ok();
}

}  // namespace vitrt
