// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ScatterND in model files: it round-trips with its reduction and runs; a reduction this build does not know
// (an edited file) and updates of the wrong shape are refused at load, and an index value that is not an
// integer in range (a file may hold any float) fails the run, each naming the op and the node.
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

std::vector<uint8_t> scatter_bytes(const Graph& g) {
  std::vector<uint8_t> b;
  REQUIRE(write_model_memory(g, &b).ok());
  return b;
}

void expect_scatter_refused(const std::vector<uint8_t>& b, const char* fragment) {
  Status st = test::load_model_bytes(b, nullptr);
  CHECK_FALSE(st.ok());
  CHECK(st.code() == StatusCode::kBadModel);
  CHECK_MESSAGE(st.message().find(fragment) != std::string::npos, "message: " << st.message());
}

// image [B,3,8,8] -> Transpose [3,B,8,8] -> ScatterND at the channel tuples `indices` ([n,1]) of updates =
// the first `updates_rows` channels -> Transpose back -> Reshape [B,-1] -> Linear -> logits [B,4].
Graph scatter_graph(const ScatterNDAttrs& a, std::vector<float> indices = {2, 0}, int64_t updates_rows = 2) {
  Graph g;
  const int32_t img = g.add_activation("image", Shape{kDynamicDim, 3, 8, 8});
  g.inputs = {img};
  const int32_t t = g.add_activation("channels_first", Shape());
  g.add_node(OpType::kTranspose, TransposeAttrs{{1, 0, 2, 3}}, {img}, {t}, "to_channels");
  const int32_t u = g.add_activation("updates", Shape());
  g.add_node(OpType::kSlice, SliceAttrs{0, 0, updates_rows}, {t}, {u}, "updates");
  const int64_t n = static_cast<int64_t>(indices.size());
  const int32_t idx = g.add_constant("indices", Shape{n, 1}, std::move(indices));
  const int32_t s = g.add_activation("op_out", Shape());
  g.add_node(OpType::kScatterND, a, {t, idx, u}, {s}, "data_op");
  const int32_t back = g.add_activation("back", Shape());
  g.add_node(OpType::kTranspose, TransposeAttrs{{1, 0, 2, 3}}, {s}, {back}, "to_images");
  const int32_t flat = g.add_activation("flat", Shape());
  g.add_node(OpType::kReshape, ReshapeAttrs{{0, -1}}, {back}, {flat}, "flatten");
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

Status run_once(const std::shared_ptr<const Model>& m, const char* backend) {
  SessionOptions so;
  so.backend = backend;
  so.max_batch = 2;
  std::unique_ptr<Session> s;
  Status st = Session::create(m, so, &s);
  if (!st.ok()) return st;
  std::vector<float> img(192 * 2), logits(8);
  for (size_t i = 0; i < img.size(); ++i) img[i] = std::sin(0.37f * static_cast<float>(i));
  return s->run(img.data(), 2, logits.data(), logits.size());
}

}  // namespace

TEST_CASE("hostile model: ScatterND round-trips with its reduction and runs on ref and cpu") {
  for (ScatterReduction r : {ScatterReduction::kNone, ScatterReduction::kAdd, ScatterReduction::kMul,
                             ScatterReduction::kMax, ScatterReduction::kMin}) {
    CAPTURE(static_cast<int>(r));
    std::shared_ptr<const Model> m;
    Status st = test::load_model_bytes(scatter_bytes(scatter_graph(ScatterNDAttrs{r})), &m);
    REQUIRE_MESSAGE(st.ok(), st.message());
    const Node& node = m->graph.nodes[2];
    REQUIRE(node.type == OpType::kScatterND);
    CHECK(std::get<ScatterNDAttrs>(node.attrs).reduction == r);
    for (const char* backend : {"ref", "cpu"}) {
      st = run_once(m, backend);
      CHECK_MESSAGE(st.ok(), st.message());
    }
  }
}

TEST_CASE(
    "hostile model: ScatterND's unknown reduction or wrong updates are refused at load, bad indices at run") {
  // The default (REPLACE) is not stored, so mutate needs a stored field: write ADD, then edit it.
  const auto edit_stored = [](int value) {
    return test::edited_model_bytes(
        scatter_bytes(scatter_graph(ScatterNDAttrs{ScatterReduction::kAdd})), [value](fb::Model* mm) {
          auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(2);
          REQUIRE(op->options_type() == fb::OpOptions::ScatterNDOptions);
          REQUIRE(static_cast<fb::ScatterNDOptions*>(op->mutable_options())
                      ->mutate_reduction(static_cast<fb::ScatterReduction>(value)));
        });
  };
  for (int bad : {5, 127, -1}) {
    CAPTURE(bad);
    const auto b = edit_stored(bad);
    expect_scatter_refused(b, "'data_op'");
    expect_scatter_refused(b, "reduction");
  }
  // Updates of 3 channels for 2 index tuples: refused by shape inference at load.
  {
    const auto b = scatter_bytes(scatter_graph(ScatterNDAttrs{}, {2, 0}, 3));
    expect_scatter_refused(b, "ScatterND");
    expect_scatter_refused(b, "do not have the shape");
  }
  // Index values a file may hold that are not channels: the run fails naming the op and node.
  for (float bad : {3.0f, -1.0f, 1.5f}) {
    CAPTURE(bad);
    std::shared_ptr<const Model> m;
    REQUIRE(test::load_model_bytes(scatter_bytes(scatter_graph(ScatterNDAttrs{}, {0, bad})), &m).ok());
    for (const char* backend : {"ref", "cpu"}) {
      const Status st = run_once(m, backend);
      CHECK_FALSE(st.ok());
      CHECK_MESSAGE(st.message().find("ScatterND 'data_op'") != std::string::npos, st.message());
    }
  }
}
