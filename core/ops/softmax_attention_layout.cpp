// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "ops/softmax_attention_layout.h"

#include <string>

namespace vitrt {

int softmax_attention_layout_inputs(AttentionInputs layout) {
  switch (layout) {
    case AttentionInputs::kSeparate:
      return 3;
    case AttentionInputs::kQkvPacked:
      return 1;
    case AttentionInputs::kQKvPacked:
      return 2;
  }
  return 0;
}

Status decode_softmax_attention_layout(const SoftmaxAttentionAttrs& attrs, const Shape* const* src,
                                       int num_src, SoftmaxAttentionLayout* out) {
  const int nb = softmax_attention_layout_inputs(attrs.inputs);
  if (nb == 0) return bad_model("unknown input layout");
  if (num_src < nb) return bad_model("expects " + std::to_string(nb) + " inputs for its layout");
  for (int i = 0; i < nb; ++i)
    if (!src[i] || src[i]->rank != 3) return bad_model("inputs must be [B,N,C]");
  SoftmaxAttentionLayout o;
  const Shape& q = *src[0];
  o.batch = q[0];
  o.nq = q[1];
  if (attrs.inputs == AttentionInputs::kQkvPacked) {
    if (q[2] % 3 != 0) return bad_model("packed qkv width " + std::to_string(q[2]) + " is not 3C");
    o.c = q[2] / 3;
    o.nk = o.nq;
    o.q_src = o.k_src = o.v_src = 0;
    o.q_off = 0;
    o.k_off = o.c;
    o.v_off = 2 * o.c;
    o.q_stride = o.k_stride = o.v_stride = 3 * o.c;
    o.q_batch = o.k_batch = o.v_batch = o.nq * 3 * o.c;
  } else {
    const Shape& k = *src[1];
    o.c = q[2];
    o.nk = k[1];
    if (k[0] != q[0]) return bad_model("q and k batch differ: " + q.str() + " vs " + k.str());
    if (attrs.inputs == AttentionInputs::kSeparate) {
      const Shape& v = *src[2];
      if (k[2] != o.c || v[2] != o.c || v[1] != k[1] || v[0] != q[0])
        return bad_model("q/k/v shapes disagree: " + q.str() + " " + k.str() + " " + v.str());
      o.q_src = 0;
      o.k_src = 1;
      o.v_src = 2;
      o.q_stride = o.k_stride = o.v_stride = o.c;
      o.q_batch = o.nq * o.c;
      o.k_batch = o.v_batch = o.nk * o.c;
    } else {
      if (k[2] != 2 * o.c)
        return bad_model("packed kv must be [B,Nk," + std::to_string(2 * o.c) + "], got " + k.str());
      o.q_src = 0;
      o.k_src = o.v_src = 1;
      o.v_off = o.c;
      o.q_stride = o.c;
      o.k_stride = o.v_stride = 2 * o.c;
      o.q_batch = o.nq * o.c;
      o.k_batch = o.v_batch = o.nk * 2 * o.c;
    }
  }
  if (attrs.num_heads < 1 || o.c % attrs.num_heads != 0)
    return bad_model("" + std::to_string(o.c) + " channels do not split into " +
                     std::to_string(attrs.num_heads) + " heads");
  o.heads = attrs.num_heads;
  o.head_dim = o.c / o.heads;
  *out = o;
  return Status::Ok();
}

}  // namespace vitrt
