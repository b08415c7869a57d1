// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SoftmaxAttention: per head h, softmax(q_h·k_hᵀ·scale)·v_h, heads split head-major, merged back to [B,Nq,C].
// Inputs depend on AttentionInputs (decoded in softmax_attention_layout.h): (q,k,v) | (qkv) | (q,kv).
// Keys/values may have fewer tokens than queries (spatial-reduction attention). An optional extra input adds
// a [B,h,Nq,Nk] bias to the scaled scores; an optional second output receives the final pre-softmax scores
// [B,h,Nq,Nk].
#include "ops/op_registry.h"
#include "ops/softmax_attention_layout.h"

namespace vitrt {

Status infer_softmax_attention(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<SoftmaxAttentionAttrs>(node.attrs);
  const int want = softmax_attention_layout_inputs(a.inputs);
  if (want > 0 && num_src != want && num_src != want + 1)
    return bad_model("SoftmaxAttention: expects " + std::to_string(want) +
                     " inputs for its layout (+1 score bias)");
  SoftmaxAttentionLayout l;
  Status decoded = decode_softmax_attention_layout(a, src, num_src, &l);
  if (!decoded.ok()) return decoded.with_context("SoftmaxAttention");
  const Shape scores{l.batch, l.heads, l.nq, l.nk};
  if (num_src == want + 1 && (!src[want] || *src[want] != scores))
    return bad_model("SoftmaxAttention: score bias must be " + scores.str() + ", got " +
                     (src[want] ? src[want]->str() : std::string("nothing")));
  dst[0] = Shape{l.batch, l.nq, l.c};
  if (node.outputs.size() > 1) dst[1] = scores;
  return Status::Ok();
}

}  // namespace vitrt
