// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SoftmaxAttention: per head h, softmax(q_h·k_hᵀ·scale)·v_h, heads split head-major, merged back to [B,Nq,C].
// Inputs depend on AttentionInputs: (q,k,v) | (qkv) | (q,kv). Keys/values may have fewer tokens than queries
// (spatial-reduction attention). An optional extra input adds a [B,h,Nq,Nk] bias to the scaled scores; an
// optional second output receives the final pre-softmax scores [B,h,Nq,Nk].
#include "ops/op_registry.h"

namespace vitrt {

Status infer_softmax_attention(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<SoftmaxAttentionAttrs>(node.attrs);
  const int want = a.inputs == AttentionInputs::kSeparate ? 3 : a.inputs == AttentionInputs::kQkvPacked ? 1 : 2;
  if (num_src != want && num_src != want + 1)
    return bad_model("SoftmaxAttention: expects " + std::to_string(want) + " inputs for its layout (+1 score bias)");
  for (int i = 0; i < want; ++i)
    if (!src[i] || src[i]->rank != 3) return bad_model("SoftmaxAttention: inputs must be [B,N,C]");
  const Shape& q = *src[0];
  int64_t c;
  if (a.inputs == AttentionInputs::kQkvPacked) {
    if (q[2] % 3 != 0) return bad_model("SoftmaxAttention: packed qkv width " + std::to_string(q[2]) + " is not 3C");
    c = q[2] / 3;
  } else {
    c = q[2];
    const Shape& k = *src[1];
    if (k[0] != q[0]) return bad_model("SoftmaxAttention: q and k batch differ: " + q.str() + " vs " + k.str());
    if (a.inputs == AttentionInputs::kSeparate) {
      const Shape& v = *src[2];
      if (k[2] != c || v[2] != c || v[1] != k[1] || v[0] != q[0])
        return bad_model("SoftmaxAttention: q/k/v shapes disagree: " + q.str() + " " + k.str() + " " + v.str());
    } else if (k[2] != 2 * c) {
      return bad_model("SoftmaxAttention: packed kv must be [B,Nk," + std::to_string(2 * c) + "], got " + k.str());
    }
  }
  if (a.num_heads < 1 || c % a.num_heads != 0)
    return bad_model("SoftmaxAttention: " + std::to_string(c) + " channels do not split into " +
                     std::to_string(a.num_heads) + " heads");
  const int64_t nk = a.inputs == AttentionInputs::kQkvPacked ? q[1] : (*src[1])[1];
  const Shape scores{q[0], a.num_heads, q[1], nk};
  if (num_src == want + 1 && (!src[want] || *src[want] != scores))
    return bad_model("SoftmaxAttention: score bias must be " + scores.str() + ", got " +
                     (src[want] ? src[want]->str() : std::string("nothing")));
  dst[0] = Shape{q[0], q[1], c};
  if (node.outputs.size() > 1) dst[1] = scores;
  return Status::Ok();
}

}  // namespace vitrt
