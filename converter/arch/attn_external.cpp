// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// EAMLP's multi-head external attention (docs/models.md §7.5, docs/linear_attention.md "External Attention"):
// trans_dims Linear(C, C') with bias, the fused ExternalAttention over h' heads of width d (linear_0 [S,d]
// and linear_1 [d,S] with biases, eps 1e-9), proj Linear(C', C). EAMLP's coef makes C' = 4C and h' = 4h; here
// C', d and S come from the keys (h' = C'/d), so other coefficients convert too. A row of
// arch/vit_attention.h.
#include "arch/blocks.h"
#include "arch/vit_attention.h"

namespace vitrt::convert {

bool detect_external_attention(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".trans_dims.weight") && b.has(prefix + ".linear_0.weight");
}

Status emit_external_attention(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  const std::string& p = site.prefix;
  const std::vector<int64_t> td = b.shape_of(p + ".trans_dims.weight"),
                             l0 = b.shape_of(p + ".linear_0.weight");
  if (td.size() != 2 || l0.size() != 2 || td[0] < 1 || l0[0] < 1 || l0[1] < 1 || td[0] % l0[1] != 0)
    return bad_input("External Attention: '" + p + ".trans_dims.weight' [C',C] and '" + p +
                     ".linear_0.weight' [S,d] must have d dividing C' (EAMLP's heads of width d)");
  const int64_t wide = td[0], slots = l0[0], d = l0[1];
  ExternalAttentionAttrs a;
  a.num_heads = static_cast<int32_t>(wide / d);
  a.eps = 1e-9f;  // EAMLP's attn / (1e-9 + attn.sum(dim=-1))
  const int32_t t = linear(b, x, p + ".trans_dims", site.dim, wide);
  const int32_t y =
      b.op(OpType::kExternalAttention, a,
           {t, b.weight(p + ".linear_0.weight", {slots, d}), b.weight(p + ".linear_0.bias", {slots}),
            b.weight(p + ".linear_1.weight", {d, slots}), b.weight(p + ".linear_1.bias", {d})},
           p);
  *out = linear(b, y, p + ".proj", wide, site.dim);
  return Status::Ok();
}

}  // namespace vitrt::convert
