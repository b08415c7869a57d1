// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_attention's kv_heads patterns (docs/linear_attention.md, Linformer): softmax attention whose keys and
// values exist only as heads [B,h,Nk,d] — mlpen's LRA Linformer (each head compressed by a constant E_h, then
// the scores divided by √d or multiplied by d^-1/2) and lucidrains' one_kv_head (one compressed key/value
// head expanded to every head) — fuses to one SoftmaxAttention reading the heads merged into [B,Nk,C] tokens,
// on odd shapes (N = 21 tokens, Nk = 5, d = 7, one head and three), and computes what the unfused graph does;
// with values that are the keys (v = k) the op reads one merged tensor for both.
// Near misses stay plain ops: keys and values that do not follow the batch (constants [1,h,Nk,d] broadcast by
// the MatMuls), values of another head width, a scale per head, the softmax over the queries.
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

constexpr int64_t kH = 7, kW = 3, kN = kH * kW, kNk = 5, kD = 7;

enum class Form { kLra, kOneKvHead };
enum class Miss { kNone, kConstantKeys, kWiderValues, kPerHeadScale, kSoftmaxOverQueries };

struct Case {
  Form form;
  int64_t heads;
  bool divide;  // scores / √d (the LRA export for d not a power of 2), else scores · d^-1/2
  Miss miss;
  bool shared = false;  // LRA with v = k
};

// image -> 1x1 stem -> tokens x [B,N,C]; q = x split into heads; k, v heads [B,h,Nk,d] per the form; then
// softmax(q·kᵀ·s)·v merged back to [B,N,C].
Graph build(const Case& c) {
  const int64_t h = c.heads, cc = h * kD;
  Checkpoint ck;
  GraphBuilder b(ck);
  // Only the weights the graph reads (the builder refuses unused keys), added on first use.
  auto weight = [&](const std::string& name, std::vector<int64_t> shape, uint32_t seed, float scale) {
    if (!ck.tensors.count(name)) add_random(&ck, name, std::move(shape), seed, scale);
    return b.weight(name);
  };
  const int32_t image = b.input("image", Shape{1, 3, kH, kW});
  int32_t x = b.op(OpType::kConv2d, Conv2dAttrs{},
                   {image, weight("stem.weight", {cc, 3, 1, 1}, 1, 0.8f), weight("stem.bias", {cc}, 2, 0.4f)},
                   "stem");
  x = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 3, 1}}, {x}, "nhwc");
  x = b.op(OpType::kReshape, ReshapeAttrs{{-1, kN, cc}}, {x}, "tokens");
  auto heads = [&](int32_t src, int64_t d, const std::string& n) {
    const int32_t r = b.op(OpType::kReshape, ReshapeAttrs{{0, -1, h, d}}, {src}, n + ".heads");
    return b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {r}, n + ".split");
  };
  const int32_t q = heads(x, kD, "q");
  int32_t k = kAbsent, v = kAbsent;
  if (c.miss == Miss::kConstantKeys) {
    k = weight("keys", {1, h, kNk, kD}, 8, 0.4f);
    v = weight("values", {1, h, kNk, kD}, 9, 0.4f);
  } else if (c.form == Form::kLra) {
    // E [h,Nk,N] times each head [B,h,N,d]; the near miss's values have heads of width d + 1.
    const int32_t e = weight("e", {h, kNk, kN}, 3, 0.6f);
    k = b.op(OpType::kMatMul, NoAttrs{}, {e, heads(x, kD, "k")}, "k");
    if (c.shared) {
      v = k;
    } else if (c.miss == Miss::kWiderValues) {
      const int32_t vx = b.op(OpType::kLinear, LinearAttrs{},
                              {x, weight("wide_v", {h * (kD + 1), cc}, 9, 0.4f), kAbsent}, "v_in");
      v = b.op(OpType::kMatMul, NoAttrs{}, {e, heads(vx, kD + 1, "v")}, "v");
    } else {
      v = b.op(OpType::kMatMul, NoAttrs{}, {e, heads(x, kD, "v")}, "v");
    }
  } else {
    // [B,N,C] -> to_k [B,N,d] -> proj [B,Nk,d] -> [B,Nk,1,d] -> [B,1,Nk,d] -> expanded to [B,h,Nk,d]
    auto one_head = [&](const std::string& n, uint32_t seed) {
      int32_t t = b.op(OpType::kLinear, LinearAttrs{}, {x, weight("to_" + n, {kD, cc}, seed, 0.4f), kAbsent},
                       n + ".proj");
      t = b.op(OpType::kMatMul, NoAttrs{}, {weight("proj_" + n, {kNk, kN}, seed + 1, 0.6f), t},
               n + ".compressed");
      t = b.op(OpType::kReshape, ReshapeAttrs{{0, kNk, -1, kD}}, {t}, n + ".one");
      t = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {t}, n + ".head");
      return b.op(OpType::kExpand, ExpandAttrs{{1, h, 1, 1}}, {t}, n);
    };
    k = one_head("k", 4);
    v = one_head("v", 6);
  }
  int32_t s = b.op(OpType::kTranspose, TransposeAttrs{{0, 1, 3, 2}}, {k}, "k_t");
  s = b.op(OpType::kMatMul, NoAttrs{}, {q, s}, "qk");
  const float root_d = std::sqrt(static_cast<float>(kD));
  if (c.miss == Miss::kPerHeadScale) {
    std::vector<float> per_head(static_cast<size_t>(h), 1.0f / root_d);
    per_head[0] *= 1.5f;
    s = b.op(OpType::kMul, NoAttrs{}, {s, b.constant("scale", Shape{1, h, 1, 1}, per_head)}, "scaled");
  } else if (c.divide) {
    s = b.op(OpType::kDiv, NoAttrs{}, {s, b.constant("root_d", Shape{1}, {root_d})}, "scaled");
  } else {
    s = b.op(OpType::kMul, NoAttrs{}, {s, b.constant("scale", Shape{1}, {1.0f / root_d})}, "scaled");
  }
  s = b.op(OpType::kSoftmax, SoftmaxAttrs{c.miss == Miss::kSoftmaxOverQueries ? 2 : -1}, {s}, "probs");
  s = b.op(OpType::kMatMul, NoAttrs{}, {s, v}, "pv");
  s = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {s}, "merged");
  const int64_t out_c = c.miss == Miss::kWiderValues ? h * (kD + 1) : cc;
  b.mark_output(b.op(OpType::kReshape, ReshapeAttrs{{0, 0, out_c}}, {s}, "out"));
  return finish_image_graph(b, kH, kW);
}

void check(const Case& c, bool fuses) {
  std::vector<uint8_t> storage;
  const auto model = load(build(c), &storage);
  for (const char* backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    auto fused = session(model, backend, 2);  // REQUIREs creation: the pass must leave a valid graph
    auto unfused = session(model, backend, 2, "fuse_attention");
    CHECK(count(fused->graph(), OpType::kSoftmaxAttention) == (fuses ? 1 : 0));
    CHECK(count(fused->graph(), OpType::kSoftmax) == (fuses ? 0 : 1));
    if (fuses) {
      // The fused op reads the merged heads: k and v as [B,Nk,C] tokens.
      for (const Node& n : fused->graph().nodes) {
        if (n.type != OpType::kSoftmaxAttention) continue;
        for (int i : {1, 2})
          CHECK(fused->graph().tensors[n.inputs[i]].shape == Shape{kDynamicDim, kNk, c.heads * kD});
        CHECK((n.inputs[1] == n.inputs[2]) == c.shared);  // shared heads merged once
      }
    }
    check_same_outputs(*fused, *unfused, 2, 17, 2e-6);
  }
}

}  // namespace

TEST_CASE("fuse_attention: LRA and one_kv_head Linformer heads fuse with their keys merged into tokens") {
  for (const Form form : {Form::kLra, Form::kOneKvHead})
    for (const int64_t heads : {1, 3})
      for (const bool divide : {false, true}) {
        CAPTURE(static_cast<int>(form));
        CAPTURE(heads);
        CAPTURE(divide);
        check({form, heads, divide, Miss::kNone}, true);
      }
  for (const int64_t heads : {1, 3}) {
    CAPTURE(heads);
    check({Form::kLra, heads, true, Miss::kNone, true}, true);  // v = k
  }
}

TEST_CASE("fuse_attention: near misses of the Linformer heads forms stay plain ops and run") {
  const Miss misses[] = {Miss::kConstantKeys, Miss::kWiderValues, Miss::kPerHeadScale,
                         Miss::kSoftmaxOverQueries};
  for (const Miss miss : misses) {
    CAPTURE(static_cast<int>(miss));
    check({Form::kLra, 3, true, miss}, false);
  }
}
