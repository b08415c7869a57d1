// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_attention on Swin's window attention as torch.onnx.export writes torchvision's (docs/onnx.md): packed
// qkv, q scaled before q·kᵀ, a relative position bias [1,h,N,N] broadcast over the windows and, in shifted
// blocks, the window mask added through the view [B/nW, nW, h, N, N]. Built on odd sizes (7 tokens per
// window, 3 windows per image, 3 heads of 5): the fusing forms must plan one SoftmaxAttention and run like
// the unfused graph at batches 1-3 on ref and cpu; terms it cannot take (a bias shared by the heads, a
// rank-3 bias, a mask per head, a mask of the wrong window count) must leave the plain ops, still correct.
// Swin V2's cosine form likewise: q and k through F.normalize (ReduceL2, Clip, Expand or not, Div), the
// product times a per-head constant [h,1,1] or [1,h,1,1] (or a scalar); q and k clipped at different eps, or
// a factor per query row, stay plain.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "arch/graph_builder.h"
#include "graph_session_util.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

constexpr int64_t kH = 7, kW = 3, kN = 7, kWindows = kH * kW / kN, kHeads = 3, kD = 5, kC = kHeads * kD;

struct Config {
  const char* name;
  bool scale_on_q;
  Shape bias;  // rank 0: none
  Shape mask;  // rank 0: none
  bool fused;
  int cosine = 0;  // 1: q and k normalised through an Expand, 2: without it (the scale then `factor`)
  Shape factor = Shape{1};  // the cosine product's factor: one per head, or another shape
  float k_eps = 1e-6f;      // the Clip of k's norm (q's: 1e-6)
};

// F.normalize(x, dim=-1, eps) as exported: x / expand(clip(reduce_l2(x, -1, keepdims), eps)).
int32_t l2_normalize(GraphBuilder& b, int32_t x, float eps, bool expand, const std::string& n) {
  int32_t norm = b.op(OpType::kReduce, ReduceAttrs{ReduceKind::kL2, {-1}, true}, {x}, n + ".norm");
  norm = b.op(OpType::kUnary, UnaryAttrs{UnaryKind::kClip, eps, INFINITY}, {norm}, n + ".clamped");
  if (expand) norm = b.op(OpType::kExpand, ExpandAttrs{{1, kHeads, kN, kD}}, {norm}, n + ".expanded");
  return b.op(OpType::kDiv, NoAttrs{}, {x, norm}, n);
}

Graph build(const Config& k) {
  Checkpoint ck;
  add_random(&ck, "stem.weight", {kC, 3, 1, 1}, 1), add_random(&ck, "stem.bias", {kC}, 2);
  add_random(&ck, "qkv.weight", {3 * kC, kC}, 3), add_random(&ck, "qkv.bias", {3 * kC}, 4, 0.1f);
  GraphBuilder b(ck);
  const int32_t image = b.input("image", Shape{1, 3, kH, kW});
  int32_t x =
      b.op(OpType::kConv2d, Conv2dAttrs{}, {image, b.weight("stem.weight"), b.weight("stem.bias")}, "stem");
  x = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 3, 1}}, {x}, "nhwc");
  x = b.op(OpType::kReshape, ReshapeAttrs{{-1, kN, kC}}, {x}, "windows");  // [B·nW, N, C]
  int32_t qkv =
      b.op(OpType::kLinear, LinearAttrs{}, {x, b.weight("qkv.weight"), b.weight("qkv.bias")}, "qkv");
  qkv = b.op(OpType::kReshape, ReshapeAttrs{{0, 0, 3, kHeads, kD}}, {qkv}, "qkv.heads");
  qkv = b.op(OpType::kTranspose, TransposeAttrs{{2, 0, 3, 1, 4}}, {qkv}, "qkv.parts");
  int32_t part[3];
  for (int p = 0; p < 3; ++p) {
    const std::string n = "part" + std::to_string(p);
    part[p] = b.op(OpType::kSlice, SliceAttrs{0, p, p + 1}, {qkv}, n + ".slice");
    part[p] = b.op(OpType::kReshape, ReshapeAttrs{{-1, kHeads, kN, kD}}, {part[p]}, n);
  }
  int32_t s;
  if (k.cosine) {
    const int32_t qn = l2_normalize(b, part[0], 1e-6f, k.cosine == 1, "q_n");
    const int32_t kn = l2_normalize(b, part[1], k.k_eps, k.cosine == 1, "k_n");
    const int32_t kt = b.op(OpType::kTranspose, TransposeAttrs{{0, 1, 3, 2}}, {kn}, "k_t");
    s = b.op(OpType::kMatMul, NoAttrs{}, {qn, kt}, "qk");
    std::vector<float> f = pseudo_random(static_cast<size_t>(k.factor.numel()), 8, 4.0f);
    for (float& v : f) v = 10.0f + v;  // exp(clamp(logit_scale)): 6 to 14
    s = b.op(OpType::kMul, NoAttrs{}, {s, b.constant("logit_scale", k.factor, std::move(f))}, "scaled");
  } else {
    const int32_t scale = b.constant("scale", Shape{1}, {1.0f / std::sqrt(static_cast<float>(kD))});
    const int32_t kt = b.op(OpType::kTranspose, TransposeAttrs{{0, 1, 3, 2}}, {part[1]}, "k_t");
    if (k.scale_on_q) {
      s = b.op(OpType::kMul, NoAttrs{}, {part[0], scale}, "q_scaled");
      s = b.op(OpType::kMatMul, NoAttrs{}, {s, kt}, "qk");
    } else {
      s = b.op(OpType::kMatMul, NoAttrs{}, {part[0], kt}, "qk");
      s = b.op(OpType::kMul, NoAttrs{}, {s, scale}, "scaled");
    }
  }
  auto values = [](const Shape& shape, uint32_t seed) {
    return pseudo_random(static_cast<size_t>(shape.numel()), seed, 2.0f);
  };
  if (k.bias.rank > 0)
    s = b.op(OpType::kAdd, NoAttrs{}, {s, b.constant("bias", k.bias, values(k.bias, 5))}, "biased");
  if (k.mask.rank > 0) {
    std::vector<float> m = values(k.mask, 6);
    for (size_t i = 0; i < m.size(); i += 3) m[i] = -100.0f;  // as Swin's: -100 between shifted regions
    s = b.op(OpType::kReshape, ReshapeAttrs{{-1, kWindows, kHeads, 0, kN}}, {s}, "by_window");
    s = b.op(OpType::kAdd, NoAttrs{}, {s, b.constant("mask", k.mask, std::move(m))}, "masked");
    s = b.op(OpType::kReshape, ReshapeAttrs{{-1, kHeads, kN, 0}}, {s}, "scores");
  }
  s = b.op(OpType::kSoftmax, SoftmaxAttrs{-1}, {s}, "probs");
  s = b.op(OpType::kMatMul, NoAttrs{}, {s, part[2]}, "pv");
  s = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {s}, "merged");
  s = b.op(OpType::kReshape, ReshapeAttrs{{0, 0, kC}}, {s}, "attn");
  b.mark_output(b.op(OpType::kReshape, ReshapeAttrs{{-1, kH * kW, kC}}, {s}, "out"));
  return finish_image_graph(b, kH, kW);
}

}  // namespace

TEST_CASE("fuse_attention: Swin's window attention (scale on q, broadcast bias, window mask) fuses exactly") {
  const Shape bias{1, kHeads, kN, kN};
  const Config configs[] = {
      {"swin block", true, bias, {}, true},
      {"swin shifted block", true, bias, Shape{1, kWindows, 1, kN, kN}, true},
      {"mask without its leading 1", true, bias, Shape{kWindows, 1, kN, kN}, true},
      {"scale after the product, broadcast bias", false, bias, {}, true},
      {"scale after the product, bias and mask", false, bias, Shape{1, kWindows, 1, kN, kN}, true},
      {"scale on q, no bias", true, {}, {}, true},
      {"bias shared by the heads", true, Shape{1, 1, kN, kN}, {}, false},
      {"bias of rank 3", true, Shape{kHeads, kN, kN}, {}, false},
      {"mask per head", true, bias, Shape{1, kWindows, kHeads, kN, kN}, false},
      {"mask of one window", true, bias, Shape{1, 1, 1, kN, kN}, false},
      {"cosine, per-head factor [h,1,1], bias and mask", false, bias, Shape{1, kWindows, 1, kN, kN}, true, 1,
       Shape{kHeads, 1, 1}, 1e-6f},
      {"cosine without the Expand, factor [1,h,1,1], bias",
       false,
       bias,
       {},
       true,
       2,
       Shape{1, kHeads, 1, 1},
       1e-6f},
      {"cosine, scalar factor, no bias", false, {}, {}, true, 1, Shape{1}, 1e-6f},
      {"cosine, q and k clipped at different eps", false, bias, {}, false, 1, Shape{kHeads, 1, 1}, 1e-5f},
      {"cosine, a factor per query row", false, bias, {}, false, 1, Shape{kHeads, kN, 1}, 1e-6f},
  };
  for (const Config& k : configs) {
    CAPTURE(k.name);
    std::vector<uint8_t> storage;
    const auto model = load(build(k), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      const int64_t max_batch = 3;
      auto fused = session(model, backend, max_batch);
      auto unfused = session(model, backend, max_batch, "fuse_attention");
      CHECK(count(fused->graph(), OpType::kSoftmaxAttention) == (k.fused ? 1 : 0));
      CHECK(count(fused->graph(), OpType::kSoftmax) == (k.fused ? 0 : 1));
      CHECK(count(unfused->graph(), OpType::kSoftmaxAttention) == 0);
      for (const Node& n : fused->graph().nodes)
        if (n.type == OpType::kSoftmaxAttention) {
          const auto& a = std::get<SoftmaxAttentionAttrs>(n.attrs);
          CHECK(a.scale_on_q == k.scale_on_q);
          CHECK(a.qk_norm == (k.cosine > 0));
          CHECK(a.head_scales.size() == (k.cosine && k.factor.numel() > 1 ? size_t{kHeads} : 0));
          CHECK(n.version == (k.cosine ? 3 : k.scale_on_q ? 2 : 1));
          CHECK(n.inputs.size() == 1 + (k.bias.rank > 0) + (k.mask.rank > 0));
        }
      // float32 roundings differ in order only (the fused kernels' sums): a few ulp of the outputs.
      check_same_outputs(*fused, *unfused, max_batch, 77, 2e-6);
    }
  }
}
