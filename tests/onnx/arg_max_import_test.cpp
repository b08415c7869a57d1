// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The importer's ArgMax / ArgMin (converter/onnx/lower_arg_max.cpp): the IR they import to, the float
// indices they compute on ref and cpu at batch 1 and 3 (exactly, with ties both ways), and the attributes
// refused naming the node.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "loader/mapped_file.h"
#include "onnx/importer.h"
#include "onnx_build.h"
#include "onnx_test_util.h"

using namespace vitrt;
using test::add_node;
using test::set_int;

namespace {

Status try_import(const onnx::ModelProto& m, Graph* g) {
  std::string log;
  return convert::import_onnx(m, convert::OnnxImportOptions{}, g, &log);
}

Graph import_model(const onnx::ModelProto& m) {
  Graph g;
  const Status st = try_import(m, &g);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return g;
}

std::map<std::string, int> ops_of(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes) ++ops[op_type_name(n.type)];
  return ops;
}

// Runs the graph at batch 1 and 3 on ref and cpu; `expect(x, i)` gives output element i of one image from
// that image's input, which must match exactly.
void check_exact(const Graph& g, int64_t in_per_image, int64_t out_per_image,
                 const std::function<double(const float* x, int64_t i)>& expect) {
  auto m = std::make_shared<Model>();
  m->graph = g;
  static const uint8_t kNoFile = 0;
  m->file = MappedFile::borrow(&kNoFile, 0);
  std::shared_ptr<const Model> model = m;
  for (const std::string backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    auto s = test::make_session(model, backend, 3);
    for (int64_t batch : {1, 3}) {
      CAPTURE(batch);
      std::vector<float> x(static_cast<size_t>(in_per_image * batch));
      for (size_t i = 0; i < x.size(); ++i) x[i] = 1.7f * std::sin(0.61f * static_cast<float>(i) + 0.3f);
      REQUIRE(s->output_shape(batch).numel() == out_per_image * batch);
      std::vector<float> y(static_cast<size_t>(out_per_image * batch), NAN);
      const Status st = s->run(x.data(), batch, y.data(), y.size());
      REQUIRE_MESSAGE(st.ok(), st.message());
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < out_per_image; ++i)
          CHECK_MESSAGE(y[b * out_per_image + i] == expect(x.data() + b * in_per_image, i), "element ", i);
    }
  }
}

}  // namespace

TEST_CASE("ArgMax and ArgMin import as the IR's ArgMax: float indices, keepdims, select_last_index") {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t last : {0, 1}) {
      for (int64_t keep : {0, 1}) {
        CAPTURE(op);
        CAPTURE(last);
        CAPTURE(keep);
        // x [B,4,6] rounded to few values (ties), index along axis -2 (the 4).
        onnx::ModelProto m = test::model_with_input({4, 6}, 13);
        auto* g = m.mutable_graph();
        add_node(g, "Round", {"x"}, {"r"});
        auto* n = add_node(g, op, {"r"}, {"y"});
        set_int(n, "axis", -2);
        set_int(n, "keepdims", keep);
        set_int(n, "select_last_index", last);
        const Graph ir = import_model(m);
        CHECK(ops_of(ir) == std::map<std::string, int>{{"Unary", 1}, {"ArgMax", 1}});
        const bool is_min = std::string(op) == "ArgMin";
        check_exact(ir, 24, 6, [&](const float* x, int64_t i) {
          int64_t best = 0;
          for (int64_t k = 1; k < 4; ++k) {
            const float v = std::nearbyint(x[k * 6 + i]), b = std::nearbyint(x[best * 6 + i]);
            const bool wins = is_min ? (last ? v <= b : v < b) : (last ? v >= b : v > b);
            if (wins) best = k;
          }
          return static_cast<double>(best);
        });
      }
    }
  }
  // Refused naming the node.
  onnx::ModelProto m11 = test::model_with_input({4, 6}, 11);
  auto* n11 = add_node(m11.mutable_graph(), "ArgMax", {"x"}, {"y"});
  n11->set_name("pick");
  set_int(n11, "select_last_index", 1);
  Graph g;
  Status st = try_import(m11, &g);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(st.message().find("node 'pick' (ArgMax, opset 11): select_last_index needs opset 12") !=
                    std::string::npos,
                st.message());
  onnx::ModelProto bad = test::model_with_input({4, 6}, 13);
  auto* nb = add_node(bad.mutable_graph(), "ArgMin", {"x"}, {"y"});
  set_int(nb, "axis", 3);
  st = try_import(bad, &g);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(st.message().find("axis 3 is out of range for rank 3") != std::string::npos, st.message());
}
