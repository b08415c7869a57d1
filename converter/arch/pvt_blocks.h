// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The PVT v2 pieces (docs/models.md §6.2) shared by the PVT v2 and LaViT builders.
#include <string>

#include "arch/graph_builder.h"

namespace vitrt::convert {

constexpr float kPvtBlockLnEps = 1e-6f;  // norm1, norm2, norm{s}
constexpr float kPvtEmbedLnEps = 1e-5f;  // patch_embed{s}.norm, attn.norm

// patch_embed{stage}: overlapping conv (7/4/3 for stage 1, else 3/2/1) -> tokens -> LayerNorm. Sets *h, *w to
// the new grid.
int32_t pvt_patch_embed(GraphBuilder& b, int32_t x, int stage, int64_t in_c, int64_t c, int64_t* h,
                        int64_t* w);

// The tokens keys and values are computed from (spatial-reduction attention), given norm1's output y:
//  - linear variant: GELU(attn.norm(attn.sr(AdaptiveAvgPool2d(7)(y as image))));
//  - attn.sr present: attn.norm(attn.sr(y as image)) (strided conv, kernel = stride = sr);
//  - otherwise y itself.
int32_t pvt_reduced_tokens(GraphBuilder& b, int32_t y, const std::string& block, int64_t c, int64_t h,
                           int64_t w, bool linear_variant);

// x + mlp.fc2(GELU(mlp.dwconv(mlp.fc1(norm2(x))))), with a ReLU after fc1 in the linear variant.
int32_t pvt_mlp_residual(GraphBuilder& b, int32_t x, const std::string& block, int64_t c, int64_t h,
                         int64_t w, bool linear_variant);

}  // namespace vitrt::convert
