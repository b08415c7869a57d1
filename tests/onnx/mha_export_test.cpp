// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// torch.nn.MultiheadAttention as torch.onnx.export writes it, in tiny torchvision VisionTransformers (fixture
// onnx_mha_cases, tools/reference/make_onnx_mha_cases.py): the importer rewrites each exported self-attention
// in the packed-qkv form (normalize_multihead_attention) where that computes the same values, and the planner
// fuses it to SoftmaxAttention, on ref and cpu, at opsets 14 and 17; with heads of 12, whose q / √12 the
// importer keeps on q's heads, too (the op's scale on q). Blocks the fused op does not compute stay unfused:
// an attention mask added to the scores, the attention weights read outside. The logits are within the
// float32-vs-float64 rule of PyTorch's at batch 1 and 2, fused and unfused, and on ref the fused and unfused
// plans agree within the float32 rounding bound the fusion tests use
// (tests/planner/primitive_fusion_test.cpp): 4 × how far the output moves when the input and every weight
// move by one ulp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"
#include "ops/op_test_util.h"

using namespace vitrt;

namespace {

// Every value moved by one float32 ulp, up or down at random (seeded): the data as one float32 rounding may
// leave it.
void nudge_ulp(float* v, size_t n, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    v[i] = std::nextafter(v[i], (s >> 31) ? INFINITY : -INFINITY);
  }
}

// The graph with every float weight of more than one value moved by one ulp (scalars such as the attention
// scale stay: moving them would change what fuses).
Graph nudged_weights(const Graph& g, uint32_t seed) {
  Graph n = g;
  for (Tensor& t : n.tensors) {
    if (!t.is_constant || t.dtype != DType::kFloat32 || t.shape.numel() <= 1) continue;
    auto values = std::make_shared<std::vector<float>>(t.f32(), t.f32() + t.constant.size / sizeof(float));
    nudge_ulp(values->data(), values->size(), seed++);
    t.constant.data = reinterpret_cast<const uint8_t*>(values->data());
    t.constant.owner = values;
  }
  return n;
}

int count(const std::map<std::string, int>& ops, const char* op) {
  return ops.count(op) ? ops.at(op) : 0;
}

}  // namespace

TEST_CASE(
    "exported nn.MultiheadAttention (torchvision ViT) plans to SoftmaxAttention where it computes the same") {
  const std::string dir = test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_mha_cases";
  std::ifstream f(dir + "/manifest.json");
  REQUIRE_MESSAGE(f.good(), "missing " << dir << "/manifest.json (its ctest fixture did not run)");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  REQUIRE(manifest["cases"].size() == 5);
  for (const auto& [name, c] : manifest["cases"].items()) {
    CAPTURE(name);
    const int attentions = c["attentions"].get<int>(), fused_blocks = c["fused"].get<int>();
    Graph g;
    std::string log;
    Status st = convert::convert_onnx_file(dir + "/" + name + ".onnx", convert::ConvertOptions{}, &g, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    // The rewrite leaves no tensor behind that nothing refers to (graph_rewrite.h, splice_and_prune).
    std::vector<bool> referenced(g.tensors.size(), false);
    for (const Node& node : g.nodes)
      for (const auto* ts : {&node.inputs, &node.outputs})
        for (int32_t t : *ts)
          if (t != kAbsent) referenced[t] = true;
    for (int32_t t : g.inputs) referenced[t] = true;
    CHECK(std::count(referenced.begin(), referenced.end(), false) == 0);
    std::vector<uint8_t> bytes, nudged_bytes[2];
    auto model = test::load_graph(g, &bytes);
    std::shared_ptr<const Model> nudged[2];
    for (int draw = 0; draw < 2; ++draw)
      nudged[draw] = test::load_graph(nudged_weights(g, 1 + 1000 * draw), &nudged_bytes[draw]);
    std::vector<float> x;
    std::vector<double> y64, y32;
    std::vector<int64_t> xs, ys;
    REQUIRE(read_npy_f32(dir + "/" + name + ".input.npy", &x, &xs).ok());
    REQUIRE(read_npy_f64(dir + "/" + name + ".logits64.npy", &y64, &ys).ok());
    REQUIRE(read_npy_f64(dir + "/" + name + ".logits32.npy", &y32, &ys).ok());
    const int64_t batch = xs[0], classes = ys[1];
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = test::make_session(model, backend, 2, "");
      auto unfused = test::make_session(model, backend, 2, "fuse_attention");
      const auto ops = test::planned_ops(*fused), unfused_ops = test::planned_ops(*unfused);
      CHECK_MESSAGE(count(ops, "SoftmaxAttention") == fused_blocks, test::ops_str(ops));
      CHECK(count(ops, "MatMul") == 2 * (attentions - fused_blocks));
      CHECK(count(ops, "Softmax") == attentions - fused_blocks);
      CHECK(count(unfused_ops, "SoftmaxAttention") == 0);
      CHECK(count(unfused_ops, "MatMul") == 2 * attentions);
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        const std::vector<float> y = test::run_batch(*fused, x, n), yu = test::run_batch(*unfused, x, n);
        const size_t out = static_cast<size_t>(n * classes);
        const std::vector<double> r64(y64.begin(), y64.begin() + out), r32(y32.begin(), y32.begin() + out);
        for (const auto* got : {&y, &yu}) {
          const test::Comparison cmp = test::compare_to_reference(*got, r64, r32);
          MESSAGE(name << " " << backend << std::string(got == &y ? " fused" : " unfused") << " batch " << n
                       << ": max |vitrt - torch64| " << cmp.max_err << ", tolerance " << cmp.tolerance);
          CHECK_MESSAGE(cmp.ok, cmp.message);
        }
        if (backend != "ref") continue;
        // Fused against unfused: the bound of tests/planner/primitive_fusion_test.cpp (4 × `moved`).
        double worst = 0, scale = 0, moved = 0;
        for (size_t i = 0; i < out; ++i) {
          worst = std::max(worst, std::abs(double(y[i]) - yu[i]));
          scale = std::max(scale, std::abs(double(y[i])));
        }
        for (int draw = 0; draw < 2; ++draw) {
          std::vector<float> xn = x;
          nudge_ulp(xn.data(), xn.size(), 500 + 1000 * draw);
          const std::vector<float> yd =
              test::run_batch(*test::make_session(nudged[draw], backend, 2, ""), xn, n);
          for (size_t i = 0; i < out; ++i) moved = std::max(moved, std::abs(double(y[i]) - yd[i]));
        }
        moved = std::max(moved, scale * std::numeric_limits<float>::epsilon());
        MESSAGE(name << " ref batch " << n << ": max |fused - unfused| " << worst << ", 4 × moved "
                     << 4 * moved);
        CHECK(worst <= 4 * moved);
        if (fused_blocks == 0) CHECK(y == yu);
      }
    }
  }
}
