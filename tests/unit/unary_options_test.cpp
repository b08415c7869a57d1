// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The Unary op's options in a model file (UnaryOptions, formats/op_options.cpp) and the Pow, Min, Max, Fmod,
// Mod op codes: a written file loads back to the same attributes (infinite Clip bounds included), and a file
// edited to hold an unknown kind or a non-finite parameter is refused at load, naming the operator and the
// option.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "model_bytes.h"
#include "model_writer.h"
#include "ops/unary_attrs.h"
#include "test_graphs.h"

using namespace vitrt;

namespace {

// tiny_classifier's logits [B,5] -> LeakyRelu(0.1) -> Clip(-inf, 2) -> Pow(·, e) -> Min(·, c) -> Max(·, c).
Graph classifier_with_elementwise_tail() {
  Graph g = test::tiny_classifier();
  const int32_t logits = g.outputs[0];
  auto act = [&](const char* name) { return g.add_activation(name, Shape()); };
  const int32_t leaky = act("leaky"), clip = act("clip"), pw = act("pow"), mn = act("min"), mx = act("max");
  g.add_node(OpType::kUnary, UnaryAttrs{UnaryKind::kLeakyRelu, 0.1f, 0.0f}, {logits}, {leaky}, "leaky");
  g.add_node(OpType::kUnary, UnaryAttrs{UnaryKind::kClip, -std::numeric_limits<float>::infinity(), 2.0f},
             {leaky}, {clip}, "clip");
  const int32_t e = g.add_constant("e", Shape{5}, {1.0f, 2.0f, 3.0f, 0.5f, 1.5f});
  const int32_t c = g.add_constant("c", Shape{1}, {0.25f});
  g.add_node(OpType::kPow, NoAttrs{}, {clip, e}, {pw}, "pow");
  g.add_node(OpType::kMin, NoAttrs{}, {pw, c}, {mn}, "min");
  g.add_node(OpType::kMax, NoAttrs{}, {mn, c}, {mx}, "max");
  g.outputs = {mx};
  REQUIRE(resolve_activation_shapes(&g).ok());
  return g;
}

std::vector<uint8_t> written() {
  std::vector<uint8_t> bytes;
  const Status st = write_model_memory(classifier_with_elementwise_tail(), &bytes);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return bytes;
}

// The options of the operator named `name` in a file being edited.
fb::UnaryOptions* unary_options(fb::Model* m, const std::string& name) {
  auto* ops = m->mutable_graph()->mutable_operators();
  for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
    fb::Operator* op = ops->GetMutableObject(i);
    if (op->name() && op->name()->str() == name) return static_cast<fb::UnaryOptions*>(op->mutable_options());
  }
  FAIL("no operator ", name);
  return nullptr;
}

}  // namespace

TEST_CASE("Unary, Pow, Min, Max: a model file keeps their ops and attributes") {
  std::shared_ptr<const Model> model;
  const Status st = test::load_model_bytes(written(), &model);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const std::vector<Node>& nodes = model->graph.nodes;
  REQUIRE(nodes.size() >= 5);
  const Node* tail = &nodes[nodes.size() - 5];
  CHECK(tail[0].type == OpType::kUnary);
  const UnaryAttrs& leaky = std::get<UnaryAttrs>(tail[0].attrs);
  CHECK(leaky.kind == UnaryKind::kLeakyRelu);
  CHECK(leaky.alpha == 0.1f);
  CHECK(leaky.beta == 0.0f);
  const UnaryAttrs& clip = std::get<UnaryAttrs>(tail[1].attrs);
  CHECK(clip.kind == UnaryKind::kClip);
  CHECK(clip.alpha == -std::numeric_limits<float>::infinity());
  CHECK(clip.beta == 2.0f);
  CHECK(tail[2].type == OpType::kPow);
  CHECK(tail[3].type == OpType::kMin);
  CHECK(tail[4].type == OpType::kMax);
}

TEST_CASE("Unary options that no writer makes are refused at load, naming the operator and the option") {
  struct Edit {
    const char* what;
    std::function<void(fb::Model*)> edit;
    const char* needle;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Edit edits[] = {
      {"unknown kind",
       [](fb::Model* m) { unary_options(m, "leaky")->mutate_kind(static_cast<fb::UnaryKind>(36)); },
       "invalid value of option 'kind'"},
      {"Celu's alpha of 0",
       [](fb::Model* m) {
         unary_options(m, "leaky")->mutate_kind(fb::UnaryKind::CELU);
         unary_options(m, "leaky")->mutate_alpha(0.0f);
       },
       "Unary options: Celu's alpha must not be 0"},
      {"negative kind",
       [](fb::Model* m) { unary_options(m, "leaky")->mutate_kind(static_cast<fb::UnaryKind>(-3)); },
       "invalid value of option 'kind'"},
      {"NaN slope", [&](fb::Model* m) { unary_options(m, "leaky")->mutate_alpha(nan); },
       "Unary options: LeakyRelu's alpha nan is not finite"},
      {"infinite slope", [](fb::Model* m) { unary_options(m, "leaky")->mutate_alpha(INFINITY); },
       "Unary options: LeakyRelu's alpha inf is not finite"},
      {"a parameter the kind does not use",
       [](fb::Model* m) { unary_options(m, "leaky")->mutate_kind(fb::UnaryKind::SQRT); },
       "Unary options: Sqrt's alpha 0.100000 must be 0 (unused)"},
      {"NaN Clip bound", [&](fb::Model* m) { unary_options(m, "clip")->mutate_beta(nan); },
       "Unary options: Clip's bound is NaN"},
  };
  for (const Edit& e : edits) {
    CAPTURE(e.what);
    const Status st = test::load_model_bytes(test::edited_model_bytes(written(), e.edit));
    CHECK(st.code() == StatusCode::kBadModel);
    CHECK_MESSAGE(st.message().find(e.needle) != std::string::npos, st.message());
    const bool names_op =
        st.message().find("leaky") != std::string::npos || st.message().find("clip") != std::string::npos;
    CHECK_MESSAGE(names_op, st.message());
  }
}

// The kinds and ops appended later (UnaryKind 17-35, op codes 39-40 and 56) round-trip like the first ones,
// parameters included.
TEST_CASE("Unary's appended kinds and the Fmod, Mod, PRelu op codes survive a model file") {
  Graph g = test::tiny_classifier();
  int32_t t = g.outputs[0];
  const int32_t c = g.add_constant("c", Shape{1}, {0.75f});
  std::vector<UnaryAttrs> kinds;
  for (int k = static_cast<int>(UnaryKind::kSin); k < kNumUnaryKinds; ++k)
    kinds.push_back({static_cast<UnaryKind>(k), 0.0f, 0.0f});
  for (UnaryAttrs& a : kinds) {
    if (a.kind == UnaryKind::kSelu) a = {a.kind, 1.5f, 1.25f};
    if (a.kind == UnaryKind::kCelu) a.alpha = -0.75f;
    if (a.kind == UnaryKind::kThresholdedRelu) a.alpha = 0.5f;
    if (a.kind == UnaryKind::kShrink) a = {a.kind, 0.25f, -2.0f};
  }
  for (const UnaryAttrs& a : kinds) {
    const std::string name = std::string("u_") + std::to_string(static_cast<int>(a.kind));
    const int32_t out = g.add_activation(name.c_str(), Shape());
    g.add_node(OpType::kUnary, a, {t}, {out}, name);
    t = out;
  }
  const int32_t f = g.add_activation("fmod", Shape()), m = g.add_activation("mod", Shape());
  const int32_t p = g.add_activation("prelu", Shape());
  g.add_node(OpType::kFmod, NoAttrs{}, {t, c}, {f}, "fmod");
  g.add_node(OpType::kMod, NoAttrs{}, {f, c}, {m}, "mod");
  g.add_node(OpType::kPRelu, NoAttrs{}, {m, c}, {p}, "prelu");
  g.outputs = {p};
  REQUIRE(resolve_activation_shapes(&g).ok());
  std::vector<uint8_t> bytes;
  Status st = write_model_memory(g, &bytes);
  REQUIRE_MESSAGE(st.ok(), st.message());
  std::shared_ptr<const Model> model;
  st = test::load_model_bytes(bytes, &model);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const std::vector<Node>& nodes = model->graph.nodes;
  const size_t n = kinds.size();
  REQUIRE(nodes.size() >= n + 3);
  const Node* tail = &nodes[nodes.size() - n - 3];
  for (size_t i = 0; i < n; ++i) {
    REQUIRE(tail[i].type == OpType::kUnary);
    const UnaryAttrs& a = std::get<UnaryAttrs>(tail[i].attrs);
    CHECK(a.kind == kinds[i].kind);
    CHECK(a.alpha == kinds[i].alpha);
    CHECK(a.beta == kinds[i].beta);
  }
  CHECK(tail[n].type == OpType::kFmod);
  CHECK(tail[n + 1].type == OpType::kMod);
  CHECK(tail[n + 2].type == OpType::kPRelu);
}
