// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_attention's "scale on the q input" form (fairseq's Linformer export: (x·s).reshape(...) as q) must not
// fuse when the keys read that same scaled tensor (q = k = x·s): the rewrite removes the Mul, so a fused op
// reading it as k would break the graph. Such a graph stays plain ops, and runs as the unfused graph; the
// same graph with k split from its own Mul still fuses.
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

constexpr int64_t kH = 7, kW = 3, kN = kH * kW, kHeads = 2, kD = 3, kC = kHeads * kD;

// image -> 1x1 stem -> tokens x [B,N,C]; q = (x·s) split into heads; k = the same (x·s) or its own x·s;
// v = x; softmax(q·kᵀ)·v merged back to [B,N,C].
Graph build(bool k_reads_q_mul) {
  Checkpoint ck;
  add_random(&ck, "stem.weight", {kC, 3, 1, 1}, 1), add_random(&ck, "stem.bias", {kC}, 2);
  GraphBuilder b(ck);
  const int32_t image = b.input("image", Shape{1, 3, kH, kW});
  int32_t x =
      b.op(OpType::kConv2d, Conv2dAttrs{}, {image, b.weight("stem.weight"), b.weight("stem.bias")}, "stem");
  x = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 3, 1}}, {x}, "nhwc");
  x = b.op(OpType::kReshape, ReshapeAttrs{{-1, kN, kC}}, {x}, "tokens");
  const int32_t scale = b.constant("scale", Shape{1}, {1.0f / std::sqrt(static_cast<float>(kD))});
  auto heads = [&](int32_t src, const std::string& n) {
    const int32_t r = b.op(OpType::kReshape, ReshapeAttrs{{0, -1, kHeads, kD}}, {src}, n + ".heads");
    return b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {r}, n);
  };
  const int32_t q_in = b.op(OpType::kMul, NoAttrs{}, {x, scale}, "q_in");
  const int32_t k_in = k_reads_q_mul ? q_in : b.op(OpType::kMul, NoAttrs{}, {x, scale}, "k_in");
  const int32_t q = heads(q_in, "q"), k = heads(k_in, "k"), v = heads(x, "v");
  int32_t s = b.op(OpType::kTranspose, TransposeAttrs{{0, 1, 3, 2}}, {k}, "k_t");
  s = b.op(OpType::kMatMul, NoAttrs{}, {q, s}, "qk");
  s = b.op(OpType::kSoftmax, SoftmaxAttrs{-1}, {s}, "probs");
  s = b.op(OpType::kMatMul, NoAttrs{}, {s, v}, "pv");
  s = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {s}, "merged");
  b.mark_output(b.op(OpType::kReshape, ReshapeAttrs{{0, 0, kC}}, {s}, "out"));
  return finish_image_graph(b, kH, kW);
}

}  // namespace

TEST_CASE("fuse_attention: a scaled q input that the keys also read stays unfused and runs") {
  for (const bool aliased : {true, false}) {
    CAPTURE(aliased);
    std::vector<uint8_t> storage;
    const auto model = load(build(aliased), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = session(model, backend, 2);  // REQUIREs creation: the pass must leave a valid graph
      auto unfused = session(model, backend, 2, "fuse_attention");
      CHECK(count(fused->graph(), OpType::kSoftmaxAttention) == (aliased ? 0 : 1));
      CHECK(count(fused->graph(), OpType::kSoftmax) == (aliased ? 1 : 0));
      check_same_outputs(*fused, *unfused, 2, 91, 2e-6);
    }
  }
}
