// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fastformer's attention as the official FastAttention (wuch15/Fastformer: FastSelfAttention `self` then
// BertSelfOutput `output`; docs/linear_attention.md, Fastformer): q = self.query(x), k = self.key(x), the
// fused FastformerAttention with self.query_att / self.key_att [h,C] and scale 1/√d, then self.transform(u) +
// q, output.dense of that + x, output.LayerNorm (eps 1e-12). The heads come from query_att's rows. A row of
// arch/vit_attention.h.
#include <cmath>

#include "arch/blocks.h"
#include "arch/vit_attention.h"

namespace vitrt::convert {

bool detect_fastformer(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".self.query_att.weight") && b.has(prefix + ".output.dense.weight");
}

Status emit_fastformer(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  const std::string& p = site.prefix;
  const int64_t c = site.dim;
  const std::vector<int64_t> qa = b.shape_of(p + ".self.query_att.weight");
  if (qa.size() != 2 || qa[0] < 1 || qa[1] != c || c % qa[0] != 0)
    return bad_input("Fastformer: '" + p + ".self.query_att.weight' must be [h," + std::to_string(c) +
                     "] with h dividing " + std::to_string(c));
  const int64_t h = qa[0];
  FastformerAttentionAttrs a;
  a.heads = static_cast<int32_t>(h);
  a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c / h)));  // the module's / √d
  const int32_t q = linear(b, x, p + ".self.query", c, c), k = linear(b, x, p + ".self.key", c, c);
  const int32_t u =
      b.op(OpType::kFastformerAttention, a,
           {q, k, b.weight(p + ".self.query_att.weight", {h, c}), b.weight(p + ".self.query_att.bias", {h}),
            b.weight(p + ".self.key_att.weight", {h, c}), b.weight(p + ".self.key_att.bias", {h})},
           p + ".self");
  const int32_t s =
      b.op(OpType::kAdd, NoAttrs{}, {linear(b, u, p + ".self.transform", c, c), q}, p + ".self.add");
  const int32_t r =
      b.op(OpType::kAdd, NoAttrs{}, {linear(b, s, p + ".output.dense", c, c), x}, p + ".output.add");
  *out = layer_norm(b, r, p + ".output.LayerNorm", c, 1e-12f);
  return Status::Ok();
}

}  // namespace vitrt::convert
