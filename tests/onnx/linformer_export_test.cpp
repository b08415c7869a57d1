// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Linformer ViTs as torch.onnx.export writes them (fixture onnx_linformer_cases,
// tools/reference/make_onnx_linformer_cases.py: vitrt_reference/deit.py with fairseq's, lucidrains' and
// mlpen's LRA Linformer layouts, shared compressions and one_kv_head included, d = 16 and d = 7, depth 2):
// each converts, every attention plans to one SoftmaxAttention on N queries and k < N compressed keys
// (fuse_attention) with no Softmax left, the compression stays outside it, and on ref and cpu, fused and with
// fuse_attention disabled, the logits are within 1e-4 of PyTorch's float64 logits relative to their largest
// magnitude, with the same argmax, at batch 1 and 2, with poisoned activations. In the one_kv_head and LRA
// forms the compressed keys exist only as heads [B,h,k,d] and the fused op reads them merged into tokens.
// Near misses (a per-channel scale on q before its split, the softmax over the queries) stay unfused.
#include <doctest/doctest.h>

#include <algorithm>
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

TEST_CASE(
    "exported Linformer ViTs (fairseq and lucidrains layouts) plan to SoftmaxAttention and match PyTorch") {
  const std::string dir = test::export_fixture_dir("onnx_linformer_cases");
  const nlohmann::json manifest = test::read_export_manifest(dir, 8);
  for (const auto& [name, c] : manifest["cases"].items()) {
    CAPTURE(name);
    test::ExportedCase ec;
    test::load_exported_case(dir, name, "logits64.npy", &ec);
    const auto& model = ec.model;
    const std::vector<float>& x = ec.x;
    const std::vector<double>& y64 = ec.y64;
    const int64_t batch = ec.batch(), classes = ec.classes();
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = test::make_session(model, backend, 2);
      auto unfused = test::make_session(model, backend, 2, "fuse_attention");
      const auto ops = test::check_fused_plan(*fused, *unfused, "SoftmaxAttention", c["blocks"].get<int>());
      MESSAGE(name << " " << backend << " plan: " << test::ops_str(ops));
      if (c["blocks"].get<int>() > 0) CHECK_MESSAGE(ops.count("Softmax") == 0, test::ops_str(ops));
      // The keys really are compressed: each fused attention reads k with fewer tokens than q.
      for (const Node& n : fused->graph().nodes) {
        if (n.type != OpType::kSoftmaxAttention) continue;
        REQUIRE(std::get<SoftmaxAttentionAttrs>(n.attrs).inputs == AttentionInputs::kSeparate);
        const Shape& q = fused->graph().tensors[n.inputs[0]].shape;
        const Shape& k = fused->graph().tensors[n.inputs[1]].shape;
        REQUIRE(q.rank == 3);
        REQUIRE(k.rank == 3);
        CHECK(k[1] < q[1]);
      }
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        for (Session* s : {fused.get(), unfused.get()}) {
          const bool is_fused = s == fused.get();
          CAPTURE(is_fused);
          const std::vector<float> y = test::run_batch(*s, x, n);
          REQUIRE(y.size() == static_cast<size_t>(n * classes));
          for (int64_t b = 0; b < n; ++b) {
            const auto row = y.begin() + b * classes;
            const auto row64 = y64.begin() + b * classes;
            double largest = 0, err = 0;
            for (int64_t k = 0; k < classes; ++k) {
              largest = std::max(largest, std::fabs(row64[k]));
              err = std::max(err, std::fabs(row[k] - row64[k]));
            }
            MESSAGE(name << " " << backend << std::string(is_fused ? " fused" : " unfused") << " batch " << n
                         << " image " << b << ": max |vitrt - torch64| " << err << " (largest logit "
                         << largest << ")");
            CHECK(err <= 1e-4 * largest);
            CHECK(std::max_element(row, row + classes) - row ==
                  std::max_element(row64, row64 + classes) - row64);
          }
        }
      }
    }
  }
}

// Near misses in fairseq's export: the first block's attention changed so that it is no longer
// SoftmaxAttention's arithmetic stays plain ops (the second block still fuses), and the plan computes what
// the unfused graph does.
TEST_CASE("exported Linformer near misses stay unfused") {
  const std::string dir = test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_linformer_cases";
  Graph base;
  std::string log;
  Status st = convert::convert_onnx_file(dir + "/fairseq.onnx", convert::ConvertOptions{}, &base, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  std::vector<float> x;
  std::vector<int64_t> xs;
  REQUIRE(read_npy_f32(dir + "/fairseq.input.npy", &x, &xs).ok());
  // The first Mul of the graph is block 0's q · d^-1/2, before the head split.
  auto first = [](const Graph& g, OpType type) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i].type == type) return static_cast<int>(i);
    return -1;
  };
  const std::map<std::string, std::function<void(Graph&)>> edits = {
      {"a per-channel scale on q",
       [&](Graph& g) {
         const int mul = first(g, OpType::kMul);
         REQUIRE(mul >= 0);
         const size_t slot = g.tensors[g.nodes[mul].inputs[0]].is_constant ? 0 : 1;
         const Tensor& s = g.tensors[g.nodes[mul].inputs[slot]];
         REQUIRE(s.shape.numel() == 1);
         const int64_t c = g.tensors[g.nodes[mul].outputs[0]].shape[2];
         std::vector<float> v(static_cast<size_t>(c), *s.f32());
         v[1] *= 1.5f;
         g.nodes[mul].inputs[slot] = g.add_constant(s.name + ".per_channel", Shape{c}, v);
       }},
      {"softmax over the queries",
       [&](Graph& g) {
         const int sm = first(g, OpType::kSoftmax);
         REQUIRE(sm >= 0);
         std::get<SoftmaxAttrs>(g.nodes[sm].attrs).axis = 2;
       }},
  };
  for (const auto& [what, edit] : edits) {
    CAPTURE(what);
    Graph g = base;
    edit(g);
    test::check_near_miss(g, x, "SoftmaxAttention", "fuse_attention");
  }
}
