// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Small graphs for unit tests: a tiny ViT-like classifier with deterministic pseudo-random weights.
#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_propagation.h"

namespace vitrt::test {

inline std::vector<float> pseudo_random(size_t n, uint32_t seed, float scale = 0.5f) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f);
  }
  return v;
}

// image [B,3,8,8] -> conv 4x4/4 -> tokens [B,4,8] -> cls concat -> LN -> qkv -> attention (2 heads) -> proj
// -> residual -> mean -> head [B,5].
inline Graph tiny_classifier() {
  Graph g;
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, 8, 8});
  g.inputs = {x};
  uint32_t seed = 1;
  auto w = [&](const char* name, Shape s) { return g.add_constant(name, s, pseudo_random(s.numel(), seed++)); };
  auto act = [&](const char* name) { return g.add_activation(name, Shape()); };
  const int32_t pe = act("patch_embed");
  g.add_node(OpType::kConv2d, Conv2dAttrs{4, 4}, {x, w("pe.w", Shape{8, 3, 4, 4}), w("pe.b", Shape{8})}, {pe},
             "patch_embed");
  const int32_t flat = act("flat");
  g.add_node(OpType::kReshape, ReshapeAttrs{{0, 0, -1}}, {pe}, {flat}, "flatten");
  const int32_t tok = act("tokens");
  g.add_node(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {flat}, {tok}, "to_tokens");
  const int32_t cat = act("cat");
  g.add_node(OpType::kConcat, ConcatAttrs{1}, {w("cls", Shape{1, 1, 8}), tok}, {cat}, "cls");
  const int32_t ln = act("ln");
  g.add_node(OpType::kLayerNorm, LayerNormAttrs{1e-6f}, {cat, w("ln.g", Shape{8}), w("ln.b", Shape{8})}, {ln}, "ln");
  const int32_t qkv = act("qkv");
  g.add_node(OpType::kLinear, LinearAttrs{}, {ln, w("qkv.w", Shape{24, 8}), w("qkv.b", Shape{24})}, {qkv}, "qkv");
  const int32_t att = act("attn");
  g.add_node(OpType::kSoftmaxAttention, SoftmaxAttentionAttrs{2, 0.5f, AttentionInputs::kQkvPacked}, {qkv}, {att},
             "attn");
  const int32_t gel = act("gelu");
  g.add_node(OpType::kGelu, GeluAttrs{GeluApproximation::kErf}, {att}, {gel}, "gelu");
  const int32_t res = act("res");
  g.add_node(OpType::kAdd, NoAttrs{}, {cat, gel}, {res}, "residual");
  const int32_t mean = act("mean");
  g.add_node(OpType::kReduceMean, ReduceMeanAttrs{{1}, false}, {res}, {mean}, "pool");
  const int32_t logits = act("logits");
  g.add_node(OpType::kLinear, LinearAttrs{}, {mean, w("head.w", Shape{5, 8}), kAbsent}, {logits}, "head");
  g.outputs = {logits};
  g.metadata.producer = "unit test";
  g.metadata.arch = "tiny";
  g.metadata.labels = {"a", "b", "c", "d", "e"};
  g.metadata.preprocess.resize_shorter = 9;
  g.metadata.preprocess.crop_h = g.metadata.preprocess.crop_w = 8;
  g.metadata.extra["note"] = "hello";
  (void)resolve_activation_shapes(&g);
  return g;
}

}  // namespace vitrt::test
