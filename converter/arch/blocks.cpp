// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "arch/blocks.h"

namespace vitrt::convert {

int32_t image_to_tokens(GraphBuilder& b, int32_t x, const std::string& name) {
  const int32_t flat = b.op(OpType::kReshape, ReshapeAttrs{{0, 0, -1}}, {x}, name + ".flatten");
  return b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {flat}, name + ".to_tokens");
}

int32_t tokens_to_image(GraphBuilder& b, int32_t x, int64_t h, int64_t w, const std::string& name) {
  const int32_t t = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {x}, name + ".to_channels");
  return b.op(OpType::kReshape, ReshapeAttrs{{0, 0, h, w}}, {t}, name + ".to_image");
}

int32_t layer_norm(GraphBuilder& b, int32_t x, const std::string& prefix, int64_t c, float eps) {
  const int32_t g = b.weight(prefix + ".weight", {c});
  const int32_t beta = b.weight(prefix + ".bias", {c});
  return b.op(OpType::kLayerNorm, LayerNormAttrs{eps}, {x, g, beta}, prefix);
}

int32_t linear(GraphBuilder& b, int32_t x, const std::string& prefix, int64_t in, int64_t out, bool bias,
               Activation act) {
  const int32_t w = b.weight(prefix + ".weight", {out, in});
  const int32_t bb = bias ? b.weight(prefix + ".bias", {out}) : kAbsent;
  return b.op(OpType::kLinear, LinearAttrs{act}, {x, w, bb}, prefix);
}

int32_t gelu(GraphBuilder& b, int32_t x, GeluApproximation approx, const std::string& name) {
  return b.op(OpType::kGelu, GeluAttrs{approx}, {x}, name);
}

}  // namespace vitrt::convert
