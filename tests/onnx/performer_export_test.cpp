// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Performer ViTs as torch.onnx.export writes them (fixture onnx_performer_cases,
// tools/reference/make_onnx_performer_cases.py: vitrt_reference/deit.py with lucidrains' Performer attention,
// softmax kernel with the per-head key max at depth 2, with the global key max at depth 1, the generalized
// ReLU kernel at depth 1): each converts, every attention plans to one PerformerAttention on ref and cpu
// (fuse_performer_attention) with no MatMul left, and the logits are within 1e-4 of PyTorch's float64 logits
// relative to their largest magnitude, with the same argmax, at batch 1 and 2 (the global key max couples the
// images: at the fixture's batch only), with poisoned activations; the unfused plan (the pass disabled) keeps
// the plain ops and computes the same logits.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"
#include "ops/op_test_util.h"

using namespace vitrt;

namespace {

size_t arg_max(const float* y, int64_t n) {
  size_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (y[i] > y[best]) best = static_cast<size_t>(i);
  return best;
}

}  // namespace

TEST_CASE(
    "exported Performer ViTs (softmax and generalized kernels) plan to PerformerAttention and match "
    "PyTorch") {
  const std::string dir = test::export_fixture_dir("onnx_performer_cases");
  const nlohmann::json manifest = test::read_export_manifest(dir, 3);
  for (const auto& [name, c] : manifest["cases"].items()) {
    CAPTURE(name);
    test::ExportedCase ec;
    test::load_exported_case(dir, name, "logits64.npy", &ec);
    const auto& model = ec.model;
    const std::vector<float>& x = ec.x;
    const std::vector<double>& y64 = ec.y64;
    const int64_t batch = ec.batch(), classes = ec.classes();
    const bool couples_batch = c["couples_batch"].get<bool>();
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = test::make_session(model, backend, 2);
      auto unfused = test::make_session(model, backend, 2, "fuse_performer_attention");
      const auto ops = test::check_fused_plan(*fused, *unfused, "PerformerAttention", c["blocks"].get<int>());
      MESSAGE(name << " " << backend << " plan: " << test::ops_str(ops));
      CHECK_MESSAGE(ops.count("PerformerAttention") == 1, test::ops_str(ops));
      CHECK_MESSAGE(ops.count("MatMul") == 0, test::ops_str(ops));  // the attention's products are all inside
      for (int64_t n = couples_batch ? batch : 1; n <= batch; ++n) {
        CAPTURE(n);
        for (Session* s : {fused.get(), unfused.get()}) {
          const bool is_fused = s == fused.get();
          CAPTURE(is_fused);
          const std::vector<float> y = test::run_batch(*s, x, n);
          REQUIRE(y.size() == static_cast<size_t>(n * classes));
          double scale = 0.0, err = 0.0;
          for (size_t i = 0; i < y.size(); ++i) {
            scale = std::fmax(scale, std::fabs(y64[i]));
            err = std::fmax(err, std::fabs(y[i] - y64[i]));
          }
          MESSAGE(name << " " << backend << std::string(is_fused ? " fused" : " unfused") << " batch " << n
                       << ": max |vitrt - torch64| " << err << " of " << scale);
          CHECK(err <= 1e-4 * scale);
          for (int64_t b = 0; b < n; ++b) {
            std::vector<float> want(y64.begin() + b * classes, y64.begin() + (b + 1) * classes);
            CHECK(arg_max(y.data() + b * classes, classes) == arg_max(want.data(), classes));
          }
        }
      }
    }
  }
}

namespace {

// The first node of `type` at or after `from` reading tensor `t` (-1 for any input), or -1.
int find_node(const Graph& g, OpType type, int32_t t = -1, size_t from = 0) {
  for (size_t i = from; i < g.nodes.size(); ++i) {
    if (g.nodes[i].type != type) continue;
    if (t < 0) return static_cast<int>(i);
    for (int32_t in : g.nodes[i].inputs)
      if (in == t) return static_cast<int>(i);
  }
  return -1;
}

// Input `slot` of node `n` replaced by a float32 constant of the same shape, values from the old one with
// `edit` applied.
void replace_constant(Graph& g, int n, size_t slot, const std::function<void(std::vector<float>&)>& edit) {
  const Tensor& old = g.tensors[g.nodes[n].inputs[slot]];
  REQUIRE(old.is_constant);
  std::vector<float> v(old.f32(), old.f32() + old.shape.numel());
  edit(v);
  const Shape shape = old.shape;
  const std::string name = old.name + ".edited";
  g.nodes[n].inputs[slot] = g.add_constant(name, shape, v);
}

// The index of the constant input of binary node n.
size_t constant_slot(const Graph& g, int n) {
  return g.tensors[g.nodes[n].inputs[0]].is_constant ? 0 : 1;
}

}  // namespace

// Near misses: one step of the first block's attention changed so that it is no longer the op's arithmetic;
// that block must stay plain ops (the second one still fuses), and the plan must still compute what the
// unfused graph computes.
TEST_CASE("exported Performer near misses stay unfused") {
  const std::string dir = test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_performer_cases";
  Graph base;
  std::string log;
  Status st = convert::convert_onnx_file(dir + "/softmax.onnx", convert::ConvertOptions{}, &base, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  std::vector<float> x;
  std::vector<int64_t> xs;
  REQUIRE(read_npy_f32(dir + "/softmax.input.npy", &x, &xs).ok());
  const std::map<std::string, std::function<void(Graph&)>> edits = {
      {"query eps 2e-4",
       [](Graph& g) {
         const int e = find_node(g, OpType::kExp);
         REQUIRE(e >= 0);
         const int add = find_node(g, OpType::kAdd, g.nodes[e].outputs[0]);
         REQUIRE(add >= 0);
         replace_constant(g, add, constant_slot(g, add), [](std::vector<float>& v) { v[0] = 2e-4f; });
       }},
      {"query ratio 0.1% up",
       [](Graph& g) {
         const int e = find_node(g, OpType::kExp);
         const int add = find_node(g, OpType::kAdd, g.nodes[e].outputs[0]);
         const int mul = find_node(g, OpType::kMul, g.nodes[add].outputs[0]);
         REQUIRE(mul >= 0);
         replace_constant(g, mul, constant_slot(g, mul), [](std::vector<float>& v) { v[0] *= 1.001f; });
       }},
      {"query max over the tokens",
       [](Graph& g) {
         const int r = find_node(g, OpType::kReduceMax);
         REQUIRE(r >= 0);
         auto& a = std::get<ReduceMeanAttrs>(g.nodes[r].attrs);
         REQUIRE(a.axes.size() == 1);
         a.axes = {2};
         Shape reduced = g.tensors[g.nodes[r].inputs[0]].shape;  // u [B,h,N,m]
         reduced[2] = 1;                                         // [B,h,1,m], still broadcast against u
         g.tensors[g.nodes[r].outputs[0]].shape = reduced;
       }},
      {"keys projected by another matrix",
       [](Graph& g) {
         // The first two transposes of the [m,d] projection are block 0's query and key projections.
         int t = -1, seen = 0;
         for (size_t i = 0; i < g.nodes.size() && seen < 2; ++i)
           if (g.nodes[i].type == OpType::kTranspose && g.tensors[g.nodes[i].inputs[0]].is_constant) {
             t = static_cast<int>(i);
             ++seen;
           }
         REQUIRE(seen == 2);
         replace_constant(g, t, 0, [](std::vector<float>& v) { v[5] += 0.25f; });
       }},
  };
  for (const auto& [what, edit] : edits) {
    CAPTURE(what);
    Graph g = base;
    edit(g);
    test::check_near_miss(g, x, "PerformerAttention", "fuse_performer_attention");
  }
}
