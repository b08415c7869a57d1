// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Performer (lucidrains performer-pytorch `Attention`, non-causal, no local heads; docs/models.md §7.2,
// docs/linear_attention.md "Performer"): to_q/to_k/to_v Linear(C, h·d) (bias optional, qkv_bias), the fused
// PerformerAttention with the stored `fast_attention.projection_matrix` [m, d], to_out Linear(h·d, C) with
// bias. The keys cannot tell the feature map or the key stabiliser: `performer` is current lucidrains'
// default (softmax kernel, key max per (b,h)) and the one auto-detected; `performer_relu`
// (generalized_attention with ReLU) and `performer_global_max` (older versions' one max over the whole batch)
// are chosen with --attn. Rows of arch/vit_attention.h.
#include "arch/blocks.h"
#include "arch/vit_attention.h"

namespace vitrt::convert {
namespace {

Status emit_performer(GraphBuilder& b, const VitAttentionSite& site, int32_t x, PerformerAttentionAttrs a,
                      int32_t* out) {
  const std::string& p = site.prefix;
  const auto qs = b.shape_of(p + ".to_q.weight");
  const auto ps = b.shape_of(p + ".fast_attention.projection_matrix");
  if (qs.size() != 2 || qs[0] < 1 || qs[0] % site.heads != 0)
    return bad_input("Performer: '" + p +
                     ".to_q.weight' must be a [h·d, C] Linear weight whose rows split into " +
                     std::to_string(site.heads) + " heads (pass --heads)");
  const int64_t inner = qs[0], d = inner / site.heads;
  if (ps.size() != 2 || ps[0] < 1 || ps[1] != d)
    return bad_input("Performer: '" + p + ".fast_attention.projection_matrix' must be [m, " +
                     std::to_string(d) + "] (d = " + std::to_string(inner) + " / " +
                     std::to_string(site.heads) + " heads)");
  a.heads = site.heads;
  const bool qkv_bias = b.has(p + ".to_q.bias");
  const int32_t q = linear(b, x, p + ".to_q", site.dim, inner, qkv_bias);
  const int32_t k = linear(b, x, p + ".to_k", site.dim, inner, qkv_bias);
  const int32_t v = linear(b, x, p + ".to_v", site.dim, inner, qkv_bias);
  const int32_t h = b.op(OpType::kPerformerAttention, a,
                         {q, k, v, b.weight(p + ".fast_attention.projection_matrix", {ps[0], d})}, p);
  *out = linear(b, h, p + ".to_out", inner, site.dim, b.has(p + ".to_out.bias"));
  return Status::Ok();
}

}  // namespace

bool detect_performer(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".fast_attention.projection_matrix") && b.has(prefix + ".to_q.weight");
}
bool detect_never(const GraphBuilder&, const std::string&) {
  return false;
}

Status emit_performer_softmax(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  return emit_performer(
      b, site, x, PerformerAttentionAttrs{1, PerformerKernel::kSoftmax, PerformerKeyMax::kPerHead}, out);
}
Status emit_performer_relu(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  return emit_performer(
      b, site, x, PerformerAttentionAttrs{1, PerformerKernel::kGeneralized, PerformerKeyMax::kPerHead}, out);
}
Status emit_performer_global_max(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  return emit_performer(b, site, x,
                        PerformerAttentionAttrs{1, PerformerKernel::kSoftmax, PerformerKeyMax::kGlobal}, out);
}

}  // namespace vitrt::convert
