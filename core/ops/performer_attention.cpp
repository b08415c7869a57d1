// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// PerformerAttention (core/ir/op_attrs.h, PerformerAttentionAttrs): q [B,Nq,C], k, v [B,Nk,C], projection
// [m,d] -> [B,Nq,C]; its attribute rules and sizes (ops/performer_attention_geometry.h).
#include "ops/op_registry.h"
#include "ops/performer_attention_geometry.h"

namespace vitrt {

std::string performer_attention_attrs_problem(const PerformerAttentionAttrs& a) {
  const int kernel = static_cast<int>(a.kernel), key_max = static_cast<int>(a.key_max);
  if (a.heads < 1) return "heads " + std::to_string(a.heads) + " must be at least 1";
  if (kernel < 0 || kernel >= kNumPerformerKernels) return "kernel " + std::to_string(kernel) + " is unknown";
  if (key_max < 0 || key_max >= kNumPerformerKeyMax)
    return "key max " + std::to_string(key_max) + " is unknown";
  if (a.kernel == PerformerKernel::kGeneralized && a.key_max != PerformerKeyMax::kPerHead)
    return "the generalized kernel has no key max (must be 0)";
  return "";
}

Status decode_performer_geometry(const PerformerAttentionAttrs& a, const Shape* const* src, int num_src,
                                 PerformerGeometry* out) {
  const std::string why = performer_attention_attrs_problem(a);
  if (!why.empty()) return bad_model(why);
  if (num_src != 4 || !src[0] || !src[1] || !src[2] || !src[3])
    return bad_model("needs four inputs: q, k, v and projection");
  const Shape &q = *src[0], &k = *src[1], &v = *src[2], &w = *src[3];
  if (q.rank != 3) return bad_model("q must be [B,N,C], got " + q.str());
  PerformerGeometry g;
  g.batch = q[0];
  g.nq = q[1];
  g.c = q[2];
  g.heads = a.heads;
  if (g.c < 1 || g.c % g.heads != 0)
    return bad_model("q's " + std::to_string(g.c) + " channels are not a positive multiple of heads " +
                     std::to_string(g.heads));
  g.d = g.c / g.heads;
  if (k.rank != 3 || k[0] != g.batch || k[2] != g.c || k[1] < 1)
    return bad_model("k must be [" + std::to_string(g.batch) + ",Nk," + std::to_string(g.c) +
                     "] with Nk >= 1, got " + k.str());
  g.nk = k[1];
  if (v != k) return bad_model("v must have k's shape " + k.str() + ", got " + v.str());
  if (w.rank != 2 || w[0] < 1 || w[1] != g.d)
    return bad_model("projection must be [m," + std::to_string(g.d) + "] with m >= 1, got " + w.str());
  g.m = w[0];
  *out = g;
  return Status::Ok();
}

Status infer_performer_attention(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  PerformerGeometry g;
  Status s = decode_performer_geometry(std::get<PerformerAttentionAttrs>(node.attrs), src, num_src, &g);
  if (!s.ok()) return s.with_context("PerformerAttention");
  dst[0] = *src[0];
  return Status::Ok();
}

}  // namespace vitrt
