// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SoftmaxAttention: per head h, softmax(q_h·k_hᵀ·scale)·v_h, heads split head-major, merged back to [B,Nq,C].
// Inputs depend on AttentionInputs (decoded in softmax_attention_layout.h): (q,k,v) | (qkv) | (q,kv).
// Keys/values may have fewer tokens than queries (spatial-reduction attention). Optional extra inputs add a
// bias [B,h,Nq,Nk] or [1,h,Nq,Nk] and then a mask [nW,Nq,Nk] to the scaled scores (decoded in
// softmax_attention_layout.h); an optional second output receives the final pre-softmax scores [B,h,Nq,Nk].
// With scale_on_q (version 2) the scale multiplies q before the product (ir/op_attrs.h).
#include "ops/op_registry.h"
#include "ops/softmax_attention_layout.h"

namespace vitrt {

Status infer_softmax_attention(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<SoftmaxAttentionAttrs>(node.attrs);
  const int want = softmax_attention_layout_inputs(a.inputs);
  if (a.scale_on_q && node.version < 2)
    return bad_model("SoftmaxAttention: scale_on_q needs op version 2 (this node is version " +
                     std::to_string(node.version) + ")");
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
