// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Linformer ViTs as torch.onnx.export writes them (fixture onnx_linformer_cases,
// tools/reference/make_onnx_linformer_cases.py: vitrt_reference/deit.py with fairseq's and lucidrains'
// Linformer layouts, shared compressions included, depth 2): each converts, every attention plans to one
// SoftmaxAttention on N queries and k < N compressed keys (fuse_attention) with no Softmax left, the
// compression stays outside it, and on ref and cpu, fused and with fuse_attention disabled, the logits are
// within 1e-4 of PyTorch's float64 logits relative to their largest magnitude, with the same argmax, at batch
// 1 and 2, with poisoned activations.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"
#include "ops/op_test_util.h"

using namespace vitrt;

TEST_CASE(
    "exported Linformer ViTs (fairseq and lucidrains layouts) plan to SoftmaxAttention and match PyTorch") {
  const std::string dir = test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_linformer_cases";
  std::ifstream f(dir + "/manifest.json");
  REQUIRE_MESSAGE(f.good(), "missing " << dir << "/manifest.json (its ctest fixture did not run)");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  REQUIRE(manifest["cases"].size() == 4);
  for (const auto& [name, c] : manifest["cases"].items()) {
    CAPTURE(name);
    Graph g;
    std::string log;
    Status st = convert::convert_onnx_file(dir + "/" + name + ".onnx", convert::ConvertOptions{}, &g, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    std::vector<uint8_t> bytes;
    auto model = test::load_graph(g, &bytes);
    std::vector<float> x;
    std::vector<double> y64;
    std::vector<int64_t> xs, ys;
    REQUIRE(read_npy_f32(dir + "/" + name + ".input.npy", &x, &xs).ok());
    REQUIRE(read_npy_f64(dir + "/" + name + ".logits64.npy", &y64, &ys).ok());
    const int64_t batch = xs[0], classes = ys[1];
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = test::make_session(model, backend, 2);
      auto unfused = test::make_session(model, backend, 2, "fuse_attention");
      const auto ops = test::planned_ops(*fused);
      MESSAGE(name << " " << backend << " plan: " << test::ops_str(ops));
      const int attentions = ops.count("SoftmaxAttention") ? ops.at("SoftmaxAttention") : 0;
      CHECK_MESSAGE(attentions == c["blocks"].get<int>(), test::ops_str(ops));
      CHECK_MESSAGE(ops.count("Softmax") == 0, test::ops_str(ops));
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
      CHECK(test::planned_ops(*unfused).count("SoftmaxAttention") == 0);
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
