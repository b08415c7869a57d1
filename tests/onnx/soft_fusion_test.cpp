// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The exported SOFT (fixture onnx_cases, soft_1111_narrow) fuses to LinearAttention only with the formula's
// constants (docs/models.md §3.4-3.5a): each constant of one attention changed in turn, that attention must
// stay unfused and the plan must still compute the changed graph (the same logits as running it as written).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "onnx/importer.h"
#include "onnx_test_util.h"

using namespace vitrt;

namespace {

int count_ops(const Session& s, OpType type) {
  int n = 0;
  for (const Node& node : s.graph().nodes) n += node.type == type;
  return n;
}

std::vector<float> run(Session& s, const std::vector<float>& x) {
  std::vector<float> y(static_cast<size_t>(s.output_shape(1).numel()), NAN);
  Status st = s.run(x.data(), 1, y.data(), y.size());
  REQUIRE_MESSAGE(st.ok(), st.message());
  return y;
}

// Replaces the constant input of the node named `node` (an ONNX node name of the export) by a copy passed
// through `change` (constants share their bytes between copies of a graph, so a new one is added). False when
// the node reads no constant.
bool change_constant(Graph& g, const std::string& node,
                     const std::function<void(std::vector<float>*)>& change) {
  for (Node& n : g.nodes) {
    if (n.name != node) continue;
    for (int32_t& t : n.inputs) {
      if (t == kAbsent || !g.tensors[t].is_constant) continue;
      const Tensor& c = g.tensors[t];
      std::vector<float> v(c.f32(), c.f32() + c.shape.numel());
      change(&v);
      const Shape shape = c.shape;
      t = g.add_constant(c.name + ".changed", shape, std::move(v));
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("exported SOFT: a constant that is not the formula's leaves that attention unfused") {
  Graph base;
  std::string log;
  const std::string path = test::onnx_fixture_dir() + "/soft_1111_narrow/opset17.onnx";
  Status st = convert::convert_onnx_file(path, convert::ConvertOptions{}, &base, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  std::vector<float> x(3 * 224 * 224);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i % 9973));
  // Stage 2's attention: its q divisor excepted (any divisor is a q scale), each constant the pattern checks.
  const std::string at = "/block2.0/att/mha/attn/";
  const std::pair<const char*, float> changes[] = {
      {"Neg", -1.0f},        // K1's −1 of exp(−dist / 2)
      {"Div_2", 0.5f},       // K2's 1/2 (the importer's reciprocal of the Div by 2)
      {"Reciprocal", 1.0f},  // α's numerator 1
      {"Mul_66", 1.8f},      // α's 0.9 · 2
      {"Mul_69", 2.0f},      // the first Newton step's 2
      {"Mul_88", 2.0f},      // the last one's
  };
  std::vector<std::pair<std::string, std::function<void(std::vector<float>*)>>> cases;
  for (const auto& [node, want] : changes)
    cases.push_back({node, [want = want](std::vector<float>* v) {
                       REQUIRE(v->size() == 1);
                       REQUIRE((*v)[0] == want);
                       (*v)[0] = want * 1.25f;
                     }});
  // The regulariser 0.01·I with one off-diagonal entry set: no longer a multiple of the identity.
  cases.push_back({"Add_62", [](std::vector<float>* v) {
                     REQUIRE(v->size() == 49 * 49);
                     REQUIRE((*v)[0] == 0.01f);
                     REQUIRE((*v)[1] == 0.0f);
                     (*v)[1] = 0.01f;
                   }});
  for (const auto& [node, change] : cases) {
    CAPTURE(node);
    Graph g = base;
    REQUIRE(change_constant(g, at + node, change));
    std::vector<uint8_t> bytes;
    auto model = test::load_graph(g, &bytes);
    auto fused = test::make_session(model, "ref", 1);
    CHECK(count_ops(*fused, OpType::kLinearAttention) == 2);
    SessionOptions o;
    o.backend = "ref";
    o.max_batch = 1;
    o.opt_level = 0;
    std::unique_ptr<Session> as_written;
    st = Session::create(model, o, &as_written);
    REQUIRE_MESSAGE(st.ok(), st.message());
    const std::vector<float> a = run(*fused, x), b = run(*as_written, x);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
      scale = std::max(scale, std::fabs(double(b[i])));
    }
    CHECK(worst <= 1e-4 * scale);
  }
}
