// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// --emit primitive against the planner's fuse_attention pass, per pattern and on odd sizes: a graph holding
// every attention form (packed qkv, separate q/k/v, q + packed kv with exported scores, LaViT reused
// attention with exported scores, attention residual, q + kv with that residual as score bias) is built once
// with the fused ops and once as plain ops. After the passes both must be the same graph, run to the same
// bytes on every backend at every batch, and the plain ops run unfused must agree closely.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "arch/blocks.h"
#include "arch/graph_builder.h"
#include "graph_session_util.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

struct Config {
  int64_t c, heads, h, w, nk, c2, heads2;  // tokens h·w of width c; nk keys; stage 2: c2 wide, heads2 heads
  int32_t newton;                          // SOFT: Newton steps (landmark ratio 2, V conv 3x3)
};

Checkpoint make_checkpoint(const Config& k) {
  Checkpoint ck;
  uint32_t seed = 1;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float scale = 0.4f) {
    add_random(&ck, name, std::move(shape), seed++, scale);
  };
  const int64_t n = k.h * k.w, n2 = (k.h / 2) * (k.w / 2);
  auto linear = [&](const std::string& p, int64_t in, int64_t out) {
    add(p + ".weight", {out, in});
    add(p + ".bias", {out}, 0.1f);
  };
  linear("embed", 3, k.c);
  linear("qkv", k.c, 3 * k.c);
  linear("sq", k.c, k.c), linear("sk", k.c, k.c), linear("sv", k.c, k.c);
  linear("q1", k.c, k.c), linear("kv1", k.c, 2 * k.c);
  linear("v2", k.c, k.c), linear("theta", k.nk, k.nk), linear("psi", n, n);
  add("ar.dw.weight", {k.heads, 1, 2, 2}), add("ar.dw.bias", {k.heads}, 0.1f);
  add("ar.pw.weight", {k.heads2, k.heads, 1, 1}), add("ar.pw.bias", {k.heads2}, 0.1f);
  add("ar.gamma", {k.heads2}, 1.0f);
  linear("la.q", k.c, k.c), linear("la.v", k.c, k.c);
  add("la.landmark.weight", {k.c / k.heads, k.c / k.heads, 2, 2}), add("la.ln.weight", {k.c / k.heads}, 1.0f);
  add("la.ln.bias", {k.c / k.heads}, 0.1f), add("la.conv.weight", {k.heads, 1, 3, 3});
  linear("t2", k.c, k.c2), linear("q3", k.c2, k.c2), linear("kv3", k.c, 2 * k.c2), linear("out3", k.c2, k.c);
  (void)n2;
  return ck;
}

Graph build(const Checkpoint& ck, const Config& k, bool primitive) {
  GraphBuilder b(ck);
  b.set_emit_primitive(primitive);
  const int64_t n = k.h * k.w, n2 = (k.h / 2) * (k.w / 2);
  const float scale = 1.0f / std::sqrt(static_cast<float>(k.c / k.heads));
  const float scale2 = 1.0f / std::sqrt(static_cast<float>(k.c2 / k.heads2));
  const int32_t img = b.input("image", Shape{1, 3, k.h, k.w});
  const int32_t t = linear(b, image_to_tokens(b, img, "tokens"), "embed", 3, k.c);
  const int32_t keys = b.op(OpType::kSlice, SliceAttrs{1, 0, k.nk}, {t}, "keys");
  const int32_t heads = static_cast<int32_t>(k.heads), heads2 = static_cast<int32_t>(k.heads2);
  auto attn = [&](const std::vector<int32_t>& in, AttentionInputs layout, const std::string& name, int32_t h,
                  float s, bool scores) {
    std::vector<std::string> outs = {name};
    if (scores) outs.push_back(name + ".scores");
    return b.op_outputs(OpType::kSoftmaxAttention, SoftmaxAttentionAttrs{h, s, layout}, in, name, outs);
  };
  const int32_t a0 =
      attn({linear(b, t, "qkv", k.c, 3 * k.c)}, AttentionInputs::kQkvPacked, "a0", heads, scale, false)[0];
  const int32_t a1 =
      attn({linear(b, t, "sq", k.c, k.c), linear(b, keys, "sk", k.c, k.c), linear(b, keys, "sv", k.c, k.c)},
           AttentionInputs::kSeparate, "a1", heads, scale, false)[0];
  const auto va = attn({linear(b, t, "q1", k.c, k.c), linear(b, keys, "kv1", k.c, 2 * k.c)},
                       AttentionInputs::kQKvPacked, "va", heads, scale, true);
  const auto la = b.op_outputs(OpType::kReusedAttention, ReusedAttentionAttrs{heads},
                               {va[1], linear(b, keys, "v2", k.c, k.c), b.weight("theta.weight"),
                                b.weight("theta.bias"), b.weight("psi.weight"), b.weight("psi.bias")},
                               "la", {"la", "la.scores"});
  const int32_t ar = b.op(OpType::kAttentionResidual,
                          AttentionResidualAttrs{static_cast<int32_t>(k.h), static_cast<int32_t>(k.w)},
                          {la[1], b.weight("ar.dw.weight"), b.weight("ar.dw.bias"), b.weight("ar.pw.weight"),
                           b.weight("ar.pw.bias"), b.weight("ar.gamma")},
                          "ar");
  const int32_t t2 = linear(b, b.op(OpType::kSlice, SliceAttrs{1, 0, n2}, {t}, "t2.tokens"), "t2", k.c, k.c2);
  const int32_t a3 = attn({linear(b, t2, "q3", k.c2, k.c2), linear(b, keys, "kv3", k.c, 2 * k.c2), ar},
                          AttentionInputs::kQKvPacked, "a3", heads2, scale2, false)[0];
  LinearAttentionAttrs soft;
  soft.num_heads = heads;
  soft.height = static_cast<int32_t>(k.h);
  soft.width = static_cast<int32_t>(k.w);
  soft.q_scale = std::pow(static_cast<float>(k.c / k.heads), -0.25f);
  soft.landmark_ratio = 2;
  soft.newton_iterations = k.newton;
  const int32_t a4 =
      b.op(OpType::kLinearAttention, soft,
           {linear(b, t, "la.q", k.c, k.c), linear(b, t, "la.v", k.c, k.c), b.weight("la.landmark.weight"),
            b.weight("la.ln.weight"), b.weight("la.ln.bias"), b.weight("la.conv.weight")},
           "la");
  int32_t sum = b.op(OpType::kAdd, NoAttrs{}, {a0, a1}, "sum0");
  sum = b.op(OpType::kAdd, NoAttrs{}, {sum, a4}, "sum0.la");
  sum = b.op(OpType::kAdd, NoAttrs{}, {sum, va[0]}, "sum1");
  sum = b.op(OpType::kAdd, NoAttrs{}, {sum, la[0]}, "sum2");
  sum = b.op(OpType::kSlice, SliceAttrs{1, 0, n2}, {sum}, "sum.head");
  b.mark_output(b.op(OpType::kAdd, NoAttrs{}, {sum, linear(b, a3, "out3", k.c2, k.c)}, "out"));
  (void)n;
  Graph g = finish_image_graph(b, k.h, k.w);
  g.metadata.preprocess.channels = 3;
  g.metadata.preprocess.mean.assign(3, 0.0f);
  g.metadata.preprocess.std.assign(3, 1.0f);
  return g;
}

std::string describe(const Graph& g) {
  std::string out;
  for (const Node& n : g.nodes) {
    out += std::string(op_type_name(n.type)) + " '" + n.name + "' (";
    for (int32_t i : n.inputs) out += (i == kAbsent ? std::string("-") : g.tensors[i].name) + ",";
    out += ") -> (";
    for (int32_t o : n.outputs) out += g.tensors[o].name + ",";
    out += ")";
    if (n.type == OpType::kSoftmaxAttention) {
      const auto& a = std::get<SoftmaxAttentionAttrs>(n.attrs);
      out += " heads " + std::to_string(a.num_heads) + " scale " + std::to_string(a.scale) + " layout " +
             std::to_string(static_cast<int>(a.inputs));
    }
    if (n.type == OpType::kReusedAttention)
      out += " heads " + std::to_string(std::get<ReusedAttentionAttrs>(n.attrs).num_heads);
    if (n.type == OpType::kAttentionResidual)
      out += " grid " + std::to_string(std::get<AttentionResidualAttrs>(n.attrs).height) + "x" +
             std::to_string(std::get<AttentionResidualAttrs>(n.attrs).width);
    out += "\n";
  }
  return out;
}

// Every value moved by one float32 ulp, up or down at random (seeded): the data as one float32 rounding may
// leave it.
void nudge_ulp(std::vector<float>* v, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : *v) {
    s = s * 1664525u + 1013904223u;
    x = std::nextafter(x, (s >> 31) ? INFINITY : -INFINITY);
  }
}

}  // namespace

TEST_CASE("--emit primitive: fuse_attention restores every fused attention op, same graph and same outputs") {
  const Config configs[] = {{12, 3, 6, 4, 5, 8, 2, 20}, {7, 1, 5, 3, 3, 6, 3, 3}, {16, 2, 4, 4, 7, 10, 5, 7}};
  for (const Config& k : configs) {
    CAPTURE(k.c);
    CAPTURE(k.heads);
    const Checkpoint ck = make_checkpoint(k);
    const Graph fused_graph = build(ck, k, false), prim_graph = build(ck, k, true);
    CHECK(count(prim_graph, OpType::kSoftmaxAttention) == 0);
    CHECK(count(prim_graph, OpType::kLinearAttention) == 0);
    CHECK(count(prim_graph, OpType::kMatMul) == 2 * 4 + 1 + 2 * k.newton + 3);
    CHECK(count(fused_graph, OpType::kSoftmaxAttention) == 4);
    // The fused graph with every weight one ulp off (two draws), for the rounding bound below.
    constexpr int kDraws = 2;
    std::vector<uint8_t> s1, s2, sd[kDraws];
    const auto fused_model = load(fused_graph, &s1), prim_model = load(prim_graph, &s2);
    std::shared_ptr<const Model> nudged_model[kDraws];
    for (int draw = 0; draw < kDraws; ++draw) {
      Checkpoint nudged = ck;
      uint32_t nudge_seed = 1 + 1000 * draw;
      for (auto& [name, t] : nudged.tensors) nudge_ulp(&t.values, nudge_seed++);
      nudged_model[draw] = load(build(nudged, k, false), &sd[draw]);
    }
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      const int64_t max_batch = 3;
      auto f = session(fused_model, backend, max_batch);
      auto p = session(prim_model, backend, max_batch);
      auto u = session(prim_model, backend, max_batch, "fuse_attention");
      std::unique_ptr<Session> d[kDraws];
      for (int draw = 0; draw < kDraws; ++draw) d[draw] = session(nudged_model[draw], backend, max_batch);
      CHECK(describe(p->graph()) == describe(f->graph()));
      CHECK(count(p->graph(), OpType::kSoftmaxAttention) == 4);
      CHECK(count(p->graph(), OpType::kReusedAttention) == 1);
      CHECK(count(p->graph(), OpType::kAttentionResidual) == 1);
      CHECK(count(p->graph(), OpType::kLinearAttention) == 1);
      CHECK(count(p->graph(), OpType::kMatMul) == 0);
      CHECK(count(u->graph(), OpType::kMatMul) == 9 + 2 * k.newton + 3);
      CHECK(p->memory().activation_bytes == f->memory().activation_bytes);
      const int64_t per = 3 * k.h * k.w;
      const std::vector<float> x = pseudo_random(static_cast<size_t>(max_batch * per), 77, 1.5f);
      std::vector<float> x_nudged[kDraws];
      for (int draw = 0; draw < kDraws; ++draw) {
        x_nudged[draw] = x;
        nudge_ulp(&x_nudged[draw], 500 + 1000 * draw);
      }
      for (int64_t batch = 1; batch <= max_batch; ++batch) {
        CAPTURE(batch);
        const size_t n_out = static_cast<size_t>(f->output_shape(batch).numel());
        std::vector<float> yf(n_out, NAN), yp(n_out, NAN), yu(n_out, NAN), yd(n_out, NAN);
        REQUIRE(f->run(x.data(), batch, yf.data(), n_out).ok());
        REQUIRE(p->run(x.data(), batch, yp.data(), n_out).ok());
        REQUIRE(u->run(x.data(), batch, yu.data(), n_out).ok());
        CHECK(std::memcmp(yf.data(), yp.data(), n_out * sizeof(float)) == 0);
        // The fused ops and the plain ops they replace are two float32 evaluations of one function that round
        // in different places, so they differ by float32 rounding error, whose size depends on the graph: up
        // to 20 Newton steps of SOFT's pseudo-inverse amplify it by the landmark kernel's condition number
        // (up to ~1e-5 of the output scale here, ~1e-7 with 3 steps), and builds that contract a·b + c into
        // FMAs differently (the ASan build) land elsewhere within it. So the error is measured, as
        // compare_to_reference (tests/ops/op_test_util.h) measures PyTorch's float32 error: `moved` is how
        // far the fused output moves when the input and every weight are moved by one ulp, the effect of one
        // float32 rounding of the data (largest of kDraws draws; at least one ulp of the scale). Each
        // evaluation is off from the exact function by about that much (measured: the two differ by
        // 0.14-2.6 × `moved` over these configs, backends and builds), so they may differ by twice it, and
        // twice again for margin (compare_to_reference allows 4 × its measured error): 4 × `moved`.
        double worst = 0, scale = 0, moved = 0;
        for (size_t i = 0; i < n_out; ++i) {
          REQUIRE(std::isfinite(yf[i]));
          worst = std::max(worst, std::abs(double(yf[i]) - yu[i]));
          scale = std::max(scale, std::abs(double(yf[i])));
        }
        for (int draw = 0; draw < kDraws; ++draw) {
          REQUIRE(d[draw]->run(x_nudged[draw].data(), batch, yd.data(), n_out).ok());
          for (size_t i = 0; i < n_out; ++i) moved = std::max(moved, std::abs(double(yf[i]) - yd[i]));
        }
        moved = std::max(moved, scale * std::numeric_limits<float>::epsilon());
        CAPTURE(moved);
        CHECK(worst <= 4 * moved);
      }
    }
  }
}
