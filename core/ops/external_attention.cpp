// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ExternalAttention (core/ir/op_attrs.h, ExternalAttentionAttrs; docs/linear_attention.md): src [B,N,C],
// w0 [S,dh], b0 [S]?, w1 [dh,S], b1 [dh]? -> [B,N,C]. Also the attribute and shape rules
// (ops/external_attention_attrs.h).
#include <cmath>

#include "ops/external_attention_attrs.h"
#include "ops/op_registry.h"

namespace vitrt {

std::string external_attention_attrs_problem(const ExternalAttentionAttrs& a) {
  if (a.num_heads < 1) return "heads must be >= 1, got " + std::to_string(a.num_heads);
  if (!std::isfinite(a.eps) || a.eps < 0.0f)
    return "eps must be finite and >= 0, got " + std::to_string(a.eps);
  return "";
}

Status decode_external_attention(const ExternalAttentionAttrs& a, const Shape* const* src, int num_src,
                                 ExternalAttentionDims* d) {
  const std::string why = external_attention_attrs_problem(a);
  if (!why.empty()) return bad_model(why);
  auto optional = [&](int i) { return i < num_src ? src[i] : nullptr; };
  if (!optional(0) || !optional(1)) return bad_model("src and w0 are required");
  const Shape& x = *src[0];
  if (x.rank != 3 || x[2] < 1) return bad_model("src must be [B,N,C] with C >= 1, got " + x.str());
  d->batch = x[0];
  d->tokens = x[1];
  d->channels = x[2];
  d->heads = a.num_heads;
  if (d->channels % d->heads != 0)
    return bad_model("C = " + std::to_string(d->channels) +
                     " is not a multiple of heads = " + std::to_string(d->heads));
  d->head_dim = d->channels / d->heads;
  const std::string dh = std::to_string(d->head_dim);
  const Shape& w0 = *src[1];
  if (w0.rank != 2 || w0[0] < 1 || w0[1] != d->head_dim)
    return bad_model("w0 must be [S," + dh + "] with S >= 1, got " + w0.str());
  d->slots = w0[0];
  const std::string s = std::to_string(d->slots);
  // Input 3 is required but follows an optional one, so the schema demands only inputs 0 and 1.
  if (!optional(3)) return bad_model("w1 is required");
  d->has_b0 = optional(2) != nullptr;
  d->has_b1 = optional(4) != nullptr;
  if (d->has_b0 && *src[2] != Shape{d->slots})
    return bad_model("b0 must be [" + s + "], got " + src[2]->str());
  if (*src[3] != Shape{d->head_dim, d->slots})
    return bad_model("w1 must be [" + dh + "," + s + "], got " + src[3]->str());
  if (d->has_b1 && *src[4] != Shape{d->head_dim})
    return bad_model("b1 must be [" + dh + "], got " + src[4]->str());
  return Status::Ok();
}

Status infer_external_attention(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  ExternalAttentionDims d;
  Status st = decode_external_attention(std::get<ExternalAttentionAttrs>(node.attrs), src, num_src, &d);
  if (!st.ok()) return st.with_context("ExternalAttention");
  dst[0] = *src[0];
  return Status::Ok();
}

}  // namespace vitrt
