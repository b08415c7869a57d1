// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_linear_transformer on the op chain the importer lowers idiap's Linear Transformer einsums to
// (docs/onnx.md): built as written, it fuses into one KernelizedAttention and runs like the plain ops; with
// the same ops but Reshapes that mix the heads (the normaliser viewed [B,1,d,h] instead of [B,h,d,1], the
// last product over [B,N,dv,h]·[B,N,h,h]), every shape the pass saw before its lowering-shape check still
// fits, so it must stay unfused and still run. Odd sizes: 2 heads, d = 3, 21 tokens.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "arch/graph_builder.h"
#include "graph_session_util.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

constexpr int64_t kH = 7, kW = 3, kN = kH * kW, kHeads = 2, kD = 3, kC = kHeads * kD;

Graph build(bool mixed_heads) {
  Checkpoint ck;
  add_random(&ck, "stem.weight", {kC, 3, 1, 1}, 1), add_random(&ck, "stem.bias", {kC}, 2);
  for (uint32_t i = 0; i < 3; ++i) {
    const std::string p = std::string(1, "qkv"[i]);
    add_random(&ck, p + ".weight", {kC, kC}, 3 + i), add_random(&ck, p + ".bias", {kC}, 6 + i, 0.1f);
  }
  GraphBuilder b(ck);
  const int32_t image = b.input("image", Shape{1, 3, kH, kW});
  int32_t x =
      b.op(OpType::kConv2d, Conv2dAttrs{}, {image, b.weight("stem.weight"), b.weight("stem.bias")}, "stem");
  x = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 3, 1}}, {x}, "nhwc");
  x = b.op(OpType::kReshape, ReshapeAttrs{{-1, kN, kC}}, {x}, "tokens");
  int32_t heads[3];
  for (int i = 0; i < 3; ++i) {
    const std::string p = std::string(1, "qkv"[i]);
    const int32_t t =
        b.op(OpType::kLinear, LinearAttrs{}, {x, b.weight(p + ".weight"), b.weight(p + ".bias")}, p + "_in");
    heads[i] = b.op(OpType::kReshape, ReshapeAttrs{{0, 0, kHeads, kD}}, {t}, p + ".heads");
  }
  const int32_t one = b.constant("one", Shape{1}, {1.0f});
  auto phi = [&](int32_t t, const std::string& n) {
    const int32_t e = b.op(OpType::kUnary, UnaryAttrs{UnaryKind::kElu, 1.0f, 0.0f}, {t}, n + ".elu");
    return b.op(OpType::kAdd, NoAttrs{}, {e, one}, n + ".phi");
  };
  const int32_t q = phi(heads[0], "q"), k = phi(heads[1], "k");
  auto op = [&](OpType type, OpAttrs attrs, std::vector<int32_t> in, const std::string& n) {
    return b.op(type, std::move(attrs), std::move(in), n);
  };
  // KV = φkᵀ·v per head -> [B,h,dv,d]
  int32_t kv = op(OpType::kMatMul, NoAttrs{},
                  {op(OpType::kTranspose, TransposeAttrs{{0, 2, 3, 1}}, {k}, "kv.a"),
                   op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {heads[2]}, "kv.b")},
                  "kv.p");
  kv = op(OpType::kTranspose, TransposeAttrs{{0, 1, 3, 2}}, {kv}, "kv");
  // Z = 1 / (φq·Σ_s φk + eps)
  const int32_t ksum = op(OpType::kReduceSum, ReduceMeanAttrs{{1}, false}, {k}, "ksum");
  const std::vector<int64_t> zb =
      mixed_heads ? std::vector<int64_t>{0, 1, kD, kHeads} : std::vector<int64_t>{0, kHeads, kD, 1};
  int32_t z = op(OpType::kMatMul, NoAttrs{},
                 {op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {q}, "z.a"),
                  op(OpType::kReshape, ReshapeAttrs{zb}, {ksum}, "z.b")},
                 "z.p");
  z = op(OpType::kReshape, ReshapeAttrs{{0, kHeads, -1}}, {z}, "z.s");
  z = op(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {z}, "z.t");
  z = op(OpType::kAdd, NoAttrs{}, {z, b.constant("eps", Shape{1}, {1e-6f})}, "z.e");
  z = op(OpType::kDiv, NoAttrs{}, {b.constant("one_r", Shape{1}, {1.0f}), z}, "z");
  // out = (φq·KVᵀ per head) · Z
  int32_t o = op(OpType::kMatMul, NoAttrs{},
                 {op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {q}, "o.a"),
                  op(OpType::kTranspose, TransposeAttrs{{0, 1, 3, 2}}, {kv}, "o.b")},
                 "o.p");
  o = op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {o}, "o.ab");
  const std::vector<int64_t> a2 =
      mixed_heads ? std::vector<int64_t>{0, kN, kD, kHeads} : std::vector<int64_t>{0, kN, kHeads, kD, 1};
  const std::vector<int64_t> b2 =
      mixed_heads ? std::vector<int64_t>{0, kN, kHeads, kHeads} : std::vector<int64_t>{0, kN, kHeads, 1, 1};
  o = op(OpType::kMatMul, NoAttrs{},
         {op(OpType::kReshape, ReshapeAttrs{a2}, {o}, "o.a2"),
          op(OpType::kReshape, ReshapeAttrs{b2}, {z}, "o.b2")},
         "o.m");
  o = op(OpType::kReshape, ReshapeAttrs{{0, kN, kHeads, kD}}, {o}, "o");
  b.mark_output(op(OpType::kReshape, ReshapeAttrs{{0, kN, kC}}, {o}, "out"));
  return finish_image_graph(b, kH, kW);
}

}  // namespace

TEST_CASE("fuse_linear_transformer: the lowering's chain fuses; the same ops mixing the heads do not") {
  for (const bool mixed : {false, true}) {
    CAPTURE(mixed);
    std::vector<uint8_t> storage;
    const auto model = load(build(mixed), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = session(model, backend, 2);
      auto unfused = session(model, backend, 2, "fuse_linear_transformer");
      CHECK(count(fused->graph(), OpType::kKernelizedAttention) == (mixed ? 0 : 1));
      CHECK(count(unfused->graph(), OpType::kKernelizedAttention) == 0);
      check_same_outputs(*fused, *unfused, 2, 93, 1e-5);
    }
  }
}
