// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// --emit primitive against the planner's fuse_performer_attention pass: a graph holding the three Performer
// forms (softmax kernel with the per-head key max, with the global key max, the ReLU kernel) on odd sizes
// (d = 7 and m = 11, one head; d = 4 and m = 5, three heads) is built once with the fused op and once as the
// plain ops torch.onnx.export writes. After the passes both must be the same graph and run to the same bytes
// on ref and cpu at every batch (the global key max couples the images of a batch, identically in both), and
// the plain ops run unfused must agree closely.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "arch/blocks.h"
#include "arch/graph_builder.h"
#include "graph_session_util.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

struct Config {
  int64_t c, heads, m, h, w;  // tokens h·w of width c, heads of d = c/heads, m random features
};

Checkpoint make_checkpoint(const Config& k) {
  Checkpoint ck;
  uint32_t seed = 11;
  for (const char* p : {"embed", "q", "k", "v"}) {
    const int64_t in = std::string(p) == "embed" ? 3 : k.c;
    add_random(&ck, std::string(p) + ".weight", {k.c, in}, seed++, 0.6f);
    add_random(&ck, std::string(p) + ".bias", {k.c}, seed++, 0.1f);
  }
  add_random(&ck, "projection", {k.m, k.c / k.heads}, seed++, 1.0f);
  return ck;
}

Graph build(const Checkpoint& ck, const Config& k, bool primitive) {
  GraphBuilder b(ck);
  b.set_emit_primitive(primitive);
  const int32_t img = b.input("image", Shape{1, 3, k.h, k.w});
  const int32_t t = linear(b, image_to_tokens(b, img, "tokens"), "embed", 3, k.c);
  const int32_t q = linear(b, t, "q", k.c, k.c), kk = linear(b, t, "k", k.c, k.c),
                v = linear(b, t, "v", k.c, k.c);
  const int32_t heads = static_cast<int32_t>(k.heads);
  const PerformerAttentionAttrs forms[] = {{heads, PerformerKernel::kSoftmax, PerformerKeyMax::kPerHead},
                                           {heads, PerformerKernel::kSoftmax, PerformerKeyMax::kGlobal},
                                           {heads, PerformerKernel::kGeneralized, PerformerKeyMax::kPerHead}};
  int32_t sum = t;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "performer" + std::to_string(i);
    const int32_t o = b.op(OpType::kPerformerAttention, forms[i], {q, kk, v, b.weight("projection")}, name);
    sum = b.op(OpType::kAdd, NoAttrs{}, {sum, o}, name + ".sum");
  }
  b.mark_output(sum);
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
    if (n.type == OpType::kPerformerAttention) {
      const auto& a = std::get<PerformerAttentionAttrs>(n.attrs);
      out += " heads " + std::to_string(a.heads) + " kernel " + std::to_string(static_cast<int>(a.kernel)) +
             " key max " + std::to_string(static_cast<int>(a.key_max));
    }
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_CASE(
    "--emit primitive: fuse_performer_attention restores every PerformerAttention, same graph and bytes") {
  const Config configs[] = {{7, 1, 11, 3, 5}, {12, 3, 5, 4, 4}};
  for (const Config& k : configs) {
    CAPTURE(k.c);
    CAPTURE(k.heads);
    const Checkpoint ck = make_checkpoint(k);
    const Graph fused_graph = build(ck, k, false), prim_graph = build(ck, k, true);
    CHECK(count(fused_graph, OpType::kPerformerAttention) == 3);
    CHECK(count(prim_graph, OpType::kPerformerAttention) == 0);
    CHECK(count(prim_graph, OpType::kMatMul) == 3 * 5);
    std::vector<uint8_t> s1, s2;
    const auto fused_model = load(fused_graph, &s1), prim_model = load(prim_graph, &s2);
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      const int64_t max_batch = 3;
      auto f = session(fused_model, backend, max_batch);
      auto p = session(prim_model, backend, max_batch);
      auto u = session(prim_model, backend, max_batch, "fuse_performer_attention");
      CHECK(describe(p->graph()) == describe(f->graph()));
      CHECK(count(p->graph(), OpType::kPerformerAttention) == 3);
      CHECK(count(p->graph(), OpType::kMatMul) == 0);
      CHECK(p->memory().activation_bytes == f->memory().activation_bytes);
      const std::vector<float> x =
          pseudo_random(static_cast<size_t>(f->input_shape(max_batch).numel()), 77, 1.5f);
      for (int64_t batch = 1; batch <= max_batch; ++batch) {
        CAPTURE(batch);
        const size_t n = static_cast<size_t>(f->output_shape(batch).numel());
        std::vector<float> yf(n, NAN), yp(n, NAN);
        REQUIRE(f->run(x.data(), batch, yf.data(), n).ok());
        REQUIRE(p->run(x.data(), batch, yp.data(), n).ok());
        CHECK(yf == yp);
      }
      check_same_outputs(*u, *f, max_batch, 77, 1e-5);
    }
  }
}
