// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The ONNX importer's ScatterND on activations (docs/onnx.md), in the form torch.onnx exports an indexed
// assignment `x[:, idx] = v`: Transpose the indexed axis to the front, ScatterND, Transpose back. Every
// reduction with a repeated (and a negative) index, on ref and cpu at batch 1 and 3 against the scatter
// written here; the IR op it becomes and its reduction after a model-file round trip; malformed or
// unsupported forms refused naming the node.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "onnx/importer.h"
#include "onnx_build.h"
#include "onnx_test_util.h"

using namespace vitrt;
using test::add_node;
using test::set_ints;

namespace {

onnx::NodeProto* constant(onnx::GraphProto* g, const std::string& name, const onnx::TensorProto& t) {
  auto* n = add_node(g, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
  return n;
}

void set_reduction(onnx::NodeProto* n, const std::string& r) {
  auto* a = n->add_attribute();
  a->set_name("reduction");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(r);
}

// x [B,3,4,5] -> Transpose [4,B,3,5] -> ScatterND(rows `indices` ([n,1] or as shaped), updates = -2 × the
// first n rows) -> Transpose back -> y [B,3,4,5].
onnx::ModelProto scatter_model(const std::string& reduction, const std::vector<int64_t>& indices_shape,
                               const std::vector<int64_t>& indices, int64_t update_rows) {
  onnx::ModelProto m = test::model_with_input({3, 4, 5}, 16);
  auto* g = m.mutable_graph();
  set_ints(add_node(g, "Transpose", {"x"}, {"t"}), "perm", {2, 0, 1, 3});
  constant(g, "starts", test::int_tensor("", {1}, {0}));
  constant(g, "ends", test::int_tensor("", {1}, {update_rows}));
  constant(g, "axes", test::int_tensor("", {1}, {0}));
  add_node(g, "Slice", {"t", "starts", "ends", "axes"}, {"rows"});
  constant(g, "minus2", test::float_tensor("", {}, {-2.0f}));
  add_node(g, "Mul", {"rows", "minus2"}, {"u"});
  constant(g, "idx", test::int_tensor("", indices_shape, indices));
  auto* s = add_node(g, "ScatterND", {"t", "idx", "u"}, {"s"});
  if (!reduction.empty()) set_reduction(s, reduction);
  set_ints(add_node(g, "Transpose", {"s"}, {"y"}), "perm", {1, 2, 0, 3});
  return m;
}

Status import_status(const onnx::ModelProto& m, Graph* g) {
  std::string log;
  return convert::import_onnx(m, convert::OnnxImportOptions{}, g, &log);
}

void check_refused(const onnx::ModelProto& m, StatusCode code, const std::string& what) {
  Graph g;
  const Status st = import_status(m, &g);
  CHECK_FALSE(st.ok());
  CHECK(st.code() == code);
  CHECK_MESSAGE(st.message().find("ScatterND_s") != std::string::npos, st.message());
  CHECK_MESSAGE(st.message().find(what) != std::string::npos, st.message());
}

}  // namespace

TEST_CASE("ScatterND on activations: every reduction, repeated and negative indices, ref and cpu") {
  struct Case {
    const char* reduction;
    ScatterReduction ir;
  };
  // Rows 3, 1, 3 (written -1) and 0 of the 4: row 3 takes two updates, in order.
  const std::vector<int64_t> indices = {3, 1, -1, 0};
  const int64_t rows[] = {3, 1, 3, 0};
  for (const Case& c : {Case{"", ScatterReduction::kNone}, Case{"none", ScatterReduction::kNone},
                        Case{"add", ScatterReduction::kAdd}, Case{"mul", ScatterReduction::kMul},
                        Case{"max", ScatterReduction::kMax}, Case{"min", ScatterReduction::kMin}}) {
    CAPTURE(c.reduction);
    Graph ir;
    const Status st = import_status(scatter_model(c.reduction, {4, 1}, indices, 4), &ir);
    REQUIRE_MESSAGE(st.ok(), st.message());
    int scatters = 0;
    for (const Node& n : ir.nodes)
      if (n.type == OpType::kScatterND) {
        ++scatters;
        CHECK(std::get<ScatterNDAttrs>(n.attrs).reduction == c.ir);
      }
    CHECK(scatters == 1);
    // Through a model file (ScatterNDOptions, op code 55): the same reduction.
    std::vector<uint8_t> storage;
    Graph image_model = ir;
    image_model.metadata.preprocess.resize_shorter = 5;
    image_model.metadata.preprocess.crop_h = 4;
    image_model.metadata.preprocess.crop_w = 5;
    const auto loaded = test::load_graph(image_model, &storage);
    for (const Node& n : loaded->graph.nodes)
      if (n.type == OpType::kScatterND) CHECK(std::get<ScatterNDAttrs>(n.attrs).reduction == c.ir);
    // y[b, ch, i, j] starts as x[b, ch, i, j]; each tuple t updates row rows[t] with -2·x[b, ch, t, j].
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto s = test::make_session(loaded, backend, 3);
      for (int64_t batch : {1, 3}) {
        CAPTURE(batch);
        std::vector<float> x(static_cast<size_t>(60 * batch));
        for (size_t i = 0; i < x.size(); ++i) x[i] = 1.7f * std::sin(0.61f * static_cast<float>(i) + 0.3f);
        const std::vector<float> y = test::run_batch(*s, x, batch);
        std::vector<float> want = x;
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t ch = 0; ch < 3; ++ch)
            for (int t = 0; t < 4; ++t)
              for (int64_t j = 0; j < 5; ++j) {
                const float u = -2.0f * x[static_cast<size_t>(((b * 3 + ch) * 4 + t) * 5 + j)];
                float& w = want[static_cast<size_t>(((b * 3 + ch) * 4 + rows[t]) * 5 + j)];
                if (c.ir == ScatterReduction::kNone) w = u;
                if (c.ir == ScatterReduction::kAdd) w = w + u;
                if (c.ir == ScatterReduction::kMul) w = w * u;
                if (c.ir == ScatterReduction::kMax) w = std::max(w, u);
                if (c.ir == ScatterReduction::kMin) w = std::min(w, u);
              }
        CHECK(y == want);
      }
    }
  }
}

TEST_CASE("ScatterND on activations: bad indices, updates, reductions and batch-addressing tuples refused") {
  // An index past the 4 rows (or before them), tuples longer than the rank, updates for the wrong tuples.
  check_refused(scatter_model("", {2, 1}, {1, 4}, 2), StatusCode::kBadInput, "index 4 (tuple 1, axis 0)");
  check_refused(scatter_model("", {2, 1}, {-5, 0}, 2), StatusCode::kBadInput, "out of range");
  check_refused(scatter_model("", {1, 5}, {0, 0, 0, 0, 0}, 1), StatusCode::kBadInput, "must end in an axis");
  check_refused(scatter_model("", {2, 1}, {0, 1}, 3), StatusCode::kBadInput, "updates are");
  check_refused(scatter_model("sum", {2, 1}, {0, 1}, 2), StatusCode::kBadInput, "reduction 'sum'");
  // Tuples of 2 address axis 1, the batch after the Transpose.
  check_refused(scatter_model("", {2, 2}, {0, 0, 1, 0}, 2), StatusCode::kUnsupported, "depends on the batch");
}
