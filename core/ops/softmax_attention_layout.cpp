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

Status decode_softmax_attention_terms(const SoftmaxAttentionLayout& l, int nb, const Shape* const* src,
                                      int num_src, SoftmaxAttentionTerms* out) {
  SoftmaxAttentionTerms t;
  if (num_src > nb + 2)
    return bad_model("expects " + std::to_string(nb) + " inputs for its layout (+ score bias, + score mask)");
  const Shape scores{l.batch, l.heads, l.nq, l.nk};
  const Shape broadcast{1, l.heads, l.nq, l.nk};
  if (num_src > nb) {
    const Shape* b = src[nb];
    if (!b || (*b != scores && *b != broadcast))
      return bad_model("score bias must be " + scores.str() + " or " + broadcast.str() + ", got " +
                       (b ? b->str() : std::string("nothing")));
    t.bias = true;
    // [1,h,Nq,Nk] at batch 1 is both forms: the same offsets.
    t.bias_batch = (*b)[0] == 1 ? 0 : l.heads * l.nq * l.nk;
  }
  if (num_src > nb + 1) {
    const Shape* m = src[nb + 1];
    if (!m || m->rank != 3 || (*m)[0] < 1 || (*m)[1] != l.nq || (*m)[2] != l.nk)
      return bad_model("score mask must be [nW," + std::to_string(l.nq) + "," + std::to_string(l.nk) +
                       "], got " + (m ? m->str() : std::string("nothing")));
    if (l.batch % (*m)[0] != 0)
      return bad_model("batch " + std::to_string(l.batch) + " is not a multiple of the score mask's " +
                       std::to_string((*m)[0]) + " windows");
    t.mask_windows = (*m)[0];
  }
  *out = t;
  return Status::Ok();
}

}  // namespace vitrt
