// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The Linear Transformer's attention (idiap/fast-transformers AttentionLayer around LinearAttention;
// docs/linear_attention.md, KernelizedAttention EluNormalized): query_projection, key_projection,
// value_projection Linear(C, C) with bias, per head φ = elu + 1 on queries and keys and each output row
// normalised by φ(Q_l)·Σ_s φ(K_s) + 1e-6 (LinearAttention's default eps), out_projection Linear(C, C). The
// heads come from --heads (the keys cannot tell them). A row of arch/vit_attention.h.
#include "arch/blocks.h"
#include "arch/vit_attention.h"

namespace vitrt::convert {

bool detect_linear_transformer(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".query_projection.weight") && b.has(prefix + ".out_projection.weight");
}

Status emit_linear_transformer(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  const std::string& p = site.prefix;
  if (site.heads < 1 || site.dim % site.heads != 0)
    return bad_input("Linear Transformer at '" + p + "': " + std::to_string(site.heads) +
                     " heads do not divide the width " + std::to_string(site.dim));
  KernelizedAttentionAttrs a;
  a.kind = KernelizedKind::kEluNormalized;
  a.num_heads = site.heads;
  a.eps = 1e-6f;  // fast_transformers LinearAttention(eps=1e-6)
  a.scale = 1.0f;
  const int32_t q = linear(b, x, p + ".query_projection", site.dim, site.dim),
                k = linear(b, x, p + ".key_projection", site.dim, site.dim),
                v = linear(b, x, p + ".value_projection", site.dim, site.dim);
  const int32_t y = b.op(OpType::kKernelizedAttention, a, {q, k, v}, p);
  *out = linear(b, y, p + ".out_projection", site.dim, site.dim);
  return Status::Ok();
}

}  // namespace vitrt::convert
