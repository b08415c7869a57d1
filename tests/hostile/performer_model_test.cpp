// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// PerformerAttention in model files: it round-trips with its attributes and runs; hostile attributes and
// shapes (no heads, heads that do not divide C, a key max with the generalized kernel, a projection of the
// wrong width, k and v that disagree, enum values this build does not know in edited files) are refused at
// load, naming the op and the node.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"
#include "unit/model_bytes.h"
#include "unit/test_graphs.h"
#include "vitrt_generated.h"

using namespace vitrt;

namespace {

std::vector<uint8_t> performer_bytes(const Graph& g) {
  std::vector<uint8_t> b;
  REQUIRE(write_model_memory(g, &b).ok());
  return b;
}

void expect_performer_refused(const std::vector<uint8_t>& b, const char* fragment) {
  Status st = test::load_model_bytes(b, nullptr);
  CHECK_FALSE(st.ok());
  CHECK(st.code() == StatusCode::kBadModel);
  CHECK_MESSAGE(st.message().find(fragment) != std::string::npos, "message: " << st.message());
}

// image [B,3,8,8] -> Reshape [B,16,12] -> PerformerAttention (q = k = x, v as given, projection [m,d]) ->
// Reshape [B,-1] -> Linear -> logits [B,4].
Graph performer_graph(const PerformerAttentionAttrs& a, const Shape& proj = Shape{5, 6},
                      bool v_other_tokens = false) {
  Graph g;
  const int32_t img = g.add_activation("image", Shape{kDynamicDim, 3, 8, 8});
  g.inputs = {img};
  const int32_t x = g.add_activation("tokens", Shape());
  g.add_node(OpType::kReshape, ReshapeAttrs{{0, 16, 12}}, {img}, {x}, "to_tokens");
  int32_t v = x;
  if (v_other_tokens) {
    v = g.add_activation("v_tokens", Shape());
    g.add_node(OpType::kReshape, ReshapeAttrs{{0, 8, 24}}, {img}, {v}, "to_v");
  }
  const int32_t y = g.add_activation("op_out", Shape());
  g.add_node(OpType::kPerformerAttention, a,
             {x, x, v, g.add_constant("projection", proj, test::pseudo_random(proj.numel(), 31))}, {y},
             "data_op");
  const int32_t flat = g.add_activation("flat", Shape());
  g.add_node(OpType::kReshape, ReshapeAttrs{{0, -1}}, {y}, {flat}, "flatten");
  const int32_t logits = g.add_activation("logits", Shape());
  const Shape ws{4, 192};
  g.add_node(OpType::kLinear, LinearAttrs{},
             {flat, g.add_constant("head.w", ws, test::pseudo_random(ws.numel(), 3)), kAbsent}, {logits},
             "head");
  g.outputs = {logits};
  g.metadata.preprocess.resize_shorter = 8;
  g.metadata.preprocess.crop_h = g.metadata.preprocess.crop_w = 8;
  return g;
}

}  // namespace

TEST_CASE("hostile model: PerformerAttention round-trips, runs, and refuses invalid attributes, naming it") {
  PerformerAttentionAttrs global;
  global.heads = 2;
  global.key_max = PerformerKeyMax::kGlobal;
  std::shared_ptr<const Model> m;
  REQUIRE(test::load_model_bytes(performer_bytes(performer_graph(global)), &m).ok());
  const auto& a = std::get<PerformerAttentionAttrs>(m->graph.nodes[1].attrs);
  CHECK((a.heads == 2 && a.kernel == PerformerKernel::kSoftmax && a.key_max == PerformerKeyMax::kGlobal));
  for (const char* backend : {"ref", "cpu"}) {
    SessionOptions so;
    so.backend = backend;
    std::unique_ptr<Session> s;
    Status st = Session::create(m, so, &s);
    REQUIRE_MESSAGE(st.ok(), st.message());
    std::vector<float> img(192), logits(4, NAN);
    for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
    REQUIRE(s->run(img.data(), 1, logits.data(), logits.size()).ok());
    for (float l : logits) CHECK(std::isfinite(l));
  }

  PerformerAttentionAttrs no_heads, five_heads, generalized_global;
  no_heads.heads = 0;
  five_heads.heads = 5;
  generalized_global.kernel = PerformerKernel::kGeneralized;
  generalized_global.key_max = PerformerKeyMax::kGlobal;
  const std::vector<std::pair<Graph, const char*>> bad = {
      {performer_graph(no_heads), "heads 0 must be at least 1"},
      {performer_graph(five_heads), "12 channels are not a positive multiple of heads 5"},
      {performer_graph(generalized_global), "the generalized kernel has no key max"},
      {performer_graph(global, Shape{5, 7}), "projection must be [m,6] with m >= 1, got [5,7]"},
      {performer_graph(global, Shape{0, 6}), "projection must be [m,6] with m >= 1, got [0,6]"},
      {performer_graph(global, Shape{5, 6}, true), "v must have k's shape"},
  };
  for (const auto& [g, why] : bad) {
    const std::vector<uint8_t> b = performer_bytes(g);
    expect_performer_refused(b, "PerformerAttention");
    expect_performer_refused(b, "'data_op'");
    expect_performer_refused(b, why);
  }
  // Edited files: enum values this build does not know, and heads edited to a negative count.
  auto edit = [&](const std::function<void(fb::PerformerAttentionOptions*)>& change) {
    return test::edited_model_bytes(performer_bytes(performer_graph(global)), [&](fb::Model* mm) {
      auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(1);
      REQUIRE(op->options_type() == fb::OpOptions::PerformerAttentionOptions);
      change(static_cast<fb::PerformerAttentionOptions*>(op->mutable_options()));
    });
  };
  expect_performer_refused(edit([](fb::PerformerAttentionOptions* o) {
                             REQUIRE(o->mutate_kernel(static_cast<fb::PerformerKernel>(7)));
                           }),
                           "PerformerAttention options: kernel 7 is unknown");
  expect_performer_refused(edit([](fb::PerformerAttentionOptions* o) {
                             REQUIRE(o->mutate_key_max(static_cast<fb::PerformerKeyMax>(-1)));
                           }),
                           "PerformerAttention options: key max -1 is unknown");
  expect_performer_refused(edit([](fb::PerformerAttentionOptions* o) { REQUIRE(o->mutate_heads(-3)); }),
                           "heads -3 must be at least 1");
}
