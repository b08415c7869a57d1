// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "arch/pvt_blocks.h"

#include "arch/blocks.h"

namespace vitrt::convert {
namespace {

constexpr int32_t kLinearPool = 7;  // pvt_v2_b2_li: AdaptiveAvgPool2d(7)

}  // namespace

int32_t pvt_patch_embed(GraphBuilder& b, int32_t x, int stage, int64_t in_c, int64_t c, int64_t* h, int64_t* w) {
  const std::string p = "patch_embed" + std::to_string(stage);
  const int k = stage == 1 ? 7 : 3, stride = stage == 1 ? 4 : 2, pad = k / 2;
  x = b.op(OpType::kConv2d, Conv2dAttrs{stride, stride, pad, pad},
           {x, b.weight(p + ".proj.weight", {c, in_c, k, k}), b.weight(p + ".proj.bias", {c})}, p + ".proj");
  *h = b.shape(x)[2];
  *w = b.shape(x)[3];
  x = image_to_tokens(b, x, p);
  return layer_norm(b, x, p + ".norm", c, kPvtEmbedLnEps);
}

int32_t pvt_reduced_tokens(GraphBuilder& b, int32_t y, const std::string& p, int64_t c, int64_t h, int64_t w,
                           bool linear_variant) {
  if (linear_variant) {
    int32_t r = tokens_to_image(b, y, h, w, p + ".attn");
    r = b.op(OpType::kAdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{kLinearPool, kLinearPool}, {r}, p + ".attn.pool");
    r = b.op(OpType::kConv2d, Conv2dAttrs{},
             {r, b.weight(p + ".attn.sr.weight", {c, c, 1, 1}), b.weight(p + ".attn.sr.bias", {c})}, p + ".attn.sr");
    r = image_to_tokens(b, r, p + ".attn.sr");
    r = layer_norm(b, r, p + ".attn.norm", c, kPvtEmbedLnEps);
    return gelu(b, r, GeluApproximation::kErf, p + ".attn.act");
  }
  if (!b.has(p + ".attn.sr.weight")) return y;
  const auto srw = b.shape_of(p + ".attn.sr.weight");
  const int sr = srw.size() == 4 ? static_cast<int>(srw[2]) : 1;
  int32_t r = tokens_to_image(b, y, h, w, p + ".attn");
  r = b.op(OpType::kConv2d, Conv2dAttrs{sr, sr},
           {r, b.weight(p + ".attn.sr.weight", {c, c, sr, sr}), b.weight(p + ".attn.sr.bias", {c})}, p + ".attn.sr");
  r = image_to_tokens(b, r, p + ".attn.sr");
  return layer_norm(b, r, p + ".attn.norm", c, kPvtEmbedLnEps);
}

int32_t pvt_mlp_residual(GraphBuilder& b, int32_t x, const std::string& p, int64_t c, int64_t h, int64_t w,
                         bool linear_variant) {
  int32_t y = layer_norm(b, x, p + ".norm2", c, kPvtBlockLnEps);
  const auto fc1 = b.shape_of(p + ".mlp.fc1.weight");
  const int64_t hidden = fc1.size() == 2 ? fc1[0] : 4 * c;
  y = linear(b, y, p + ".mlp.fc1", c, hidden);
  if (linear_variant) y = b.op(OpType::kRelu, NoAttrs{}, {y}, p + ".mlp.relu");
  y = tokens_to_image(b, y, h, w, p + ".mlp.dwconv");
  y = b.op(OpType::kConv2d, Conv2dAttrs{1, 1, 1, 1, 1, 1, static_cast<int32_t>(hidden)},
           {y, b.weight(p + ".mlp.dwconv.dwconv.weight", {hidden, 1, 3, 3}),
            b.weight(p + ".mlp.dwconv.dwconv.bias", {hidden})},
           p + ".mlp.dwconv.dwconv");
  y = image_to_tokens(b, y, p + ".mlp.dwconv");
  y = gelu(b, y, GeluApproximation::kErf, p + ".mlp.act");
  y = linear(b, y, p + ".mlp.fc2", hidden, c);
  return b.op(OpType::kAdd, NoAttrs{}, {x, y}, p + ".residual2");
}

}  // namespace vitrt::convert
