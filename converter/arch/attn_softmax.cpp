// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// timm/DeiT attention (docs/models.md §5): packed qkv Linear(C, 3C) with bias, softmax(q kᵀ / √d) v per head,
// proj Linear(C, C). The ViT builder's default row of arch/vit_attention.h.
#include <cmath>

#include "arch/blocks.h"
#include "arch/vit_attention.h"

namespace vitrt::convert {

bool detect_softmax_attention(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".qkv.weight");
}

Status emit_softmax_attention(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  const int64_t c = site.dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c / site.heads));
  int32_t h = linear(b, x, site.prefix + ".qkv", c, 3 * c);
  h = b.op(OpType::kSoftmaxAttention, SoftmaxAttentionAttrs{site.heads, scale, AttentionInputs::kQkvPacked},
           {h}, site.prefix);
  *out = linear(b, h, site.prefix + ".proj", c, c);
  return Status::Ok();
}

}  // namespace vitrt::convert
