// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The fold_constants pass: ops whose inputs are all constants run once at plan time; the logits do not change.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"
#include "test_graphs.h"

using namespace vitrt;

namespace {

// x [B,1,5,6] -> Linear(x, W) -> + Transpose(Ct) -> * (a * b) -> + Reshape(h): the Transpose, the Mul of a and b and
// the Reshape read only constants; the Linear, the Adds and the other Mul read the activation.
Graph foldable_graph() {
  Graph g;
  const int32_t x = g.add_activation("x", Shape{kDynamicDim, 1, 5, 6});
  g.inputs = {x};
  const int32_t y = g.add_activation("y", Shape());
  g.add_node(OpType::kLinear, LinearAttrs{}, {x, g.add_constant("w", Shape{7, 6}, test::pseudo_random(42, 3)), kAbsent},
             {y}, "fc1");
  const int32_t c = g.add_activation("c", Shape());
  g.add_node(OpType::kTranspose, TransposeAttrs{{1, 0}}, {g.add_constant("ct", Shape{7, 5}, test::pseudo_random(35, 4))},
             {c}, "c.transpose");
  const int32_t yc = g.add_activation("yc", Shape());
  g.add_node(OpType::kAdd, NoAttrs{}, {y, c}, {yc}, "c.add");
  const int32_t ab = g.add_activation("ab", Shape());
  g.add_node(OpType::kMul, NoAttrs{},
             {g.add_constant("a", Shape{7}, test::pseudo_random(7, 5)), g.add_constant("b", Shape{7}, test::pseudo_random(7, 6))},
             {ab}, "scale.mul");
  const int32_t z = g.add_activation("z", Shape());
  g.add_node(OpType::kMul, NoAttrs{}, {yc, ab}, {z}, "scale");
  const int32_t hr = g.add_activation("hr", Shape());
  g.add_node(OpType::kReshape, ReshapeAttrs{{5, 7}}, {g.add_constant("h", Shape{35}, test::pseudo_random(35, 7))},
             {hr}, "h.reshape");
  const int32_t out = g.add_activation("out", Shape());
  g.add_node(OpType::kAdd, NoAttrs{}, {z, hr}, {out}, "h.add");
  g.outputs = {out};
  g.metadata.producer = "unit test";
  g.metadata.preprocess.channels = 1;
  g.metadata.preprocess.mean = {0.5f};
  g.metadata.preprocess.std = {0.5f};
  g.metadata.preprocess.crop_h = 5;
  g.metadata.preprocess.crop_w = 6;
  g.metadata.preprocess.resize_shorter = 5;
  REQUIRE(resolve_activation_shapes(&g).ok());
  return g;
}

std::shared_ptr<const Model> load(const Graph& g) {
  static std::vector<std::vector<uint8_t>> keep;
  std::vector<uint8_t> bytes;
  REQUIRE(write_model_memory(g, &bytes).ok());
  keep.emplace_back((bytes.size() + 63) / 64 * 64 + 64);
  uint8_t* p = keep.back().data();
  p += (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
  std::memcpy(p, bytes.data(), bytes.size());
  std::shared_ptr<const Model> m;
  Status st = load_model_from_memory(p, bytes.size(), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return m;
}

std::vector<float> run(const std::shared_ptr<const Model>& m, SessionOptions o, std::unique_ptr<Session>* s) {
  o.max_batch = 2;
  o.poison_activations = true;
  o.guard_arena = true;
  Status st = Session::create(m, o, s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const auto x = test::pseudo_random(2 * 5 * 6, 9, 1.0f);
  std::vector<float> y(2 * 5 * 7, NAN);
  st = (*s)->run(x.data(), 2, y.data(), y.size());
  REQUIRE_MESSAGE(st.ok(), st.message());
  return y;
}

}  // namespace

TEST_CASE("fold_constants: weight-side ops run at plan time; the logits are those of the unfolded graph") {
  const auto model = load(foldable_graph());
  for (const char* backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    SessionOptions o;
    o.backend = backend;
    std::unique_ptr<Session> folded, plain, disabled;
    const auto yf = run(model, o, &folded);
    o.opt_level = 0;
    const auto yp = run(model, o, &plain);
    o.opt_level = 1;
    o.disabled_passes = "fold_constants";
    const auto yd = run(model, o, &disabled);
    CHECK(yf == yp);
    CHECK(yd == yp);
    CHECK(plain->graph().nodes.size() == 7);
    CHECK(disabled->graph().nodes.size() == 7);
    REQUIRE(folded->graph().nodes.size() == 4);  // fc1, c.add, scale, h.add
    for (const Node& n : folded->graph().nodes) CHECK(n.type != OpType::kTranspose);
    bool reported = false;
    for (const PassReport& r : folded->pass_report()) reported = reported || (r.name == "fold_constants" && r.modified);
    CHECK(reported);
    // The folded tensors live in the session's persistent arena, not in the file.
    const Graph& g = folded->graph();
    uint64_t persistent = 0;
    for (size_t i = 0; i < g.tensors.size(); ++i)
      if (folded->placements()[i].arena == ArenaKind::kPersistent) {
        CHECK(g.tensors[i].is_constant);
        persistent += folded->placements()[i].bytes;
      }
    CHECK(persistent == (35 + 7 + 35) * sizeof(float));
    CHECK(folded->memory().persistent_bytes == persistent);
  }
}

TEST_CASE("fold_constants: ops that read an activation are never folded") {
  // The tiny classifier's constant-fed ops (the class-token Concat, the Linears...) all read an activation too.
  const auto model = load(test::tiny_classifier());
  SessionOptions o;
  o.backend = "ref";
  std::unique_ptr<Session> s;
  REQUIRE(Session::create(model, o, &s).ok());
  for (const PassReport& r : s->pass_report())
    if (r.name == "fold_constants") CHECK_FALSE(r.modified);
  CHECK(s->memory().persistent_bytes == 0);
}
