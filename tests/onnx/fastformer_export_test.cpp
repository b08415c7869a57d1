// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fastformer attention as torch.onnx.export writes it (fixture onnx_fastformer_cases,
// tools/reference/make_onnx_fastformer_cases.py: the official FastAttention in a patch net and in a depth-2
// ViT): each converts, every attention plans to one FastformerAttention on ref and cpu (none with
// fuse_fastformer disabled), and the logits, fused and unfused, are within 1e-4 of the largest float64
// PyTorch logit with the same argmax, at batch 1 and 2.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"

using namespace vitrt;

namespace {

// max |y - y64| <= 1e-4 · max |y64| and the same argmax in every row.
void check_logits(const std::vector<float>& y, const std::vector<double>& y64, int64_t rows,
                  int64_t classes) {
  double scale = 0, err = 0;
  for (int64_t i = 0; i < rows * classes; ++i) {
    scale = std::fmax(scale, std::fabs(y64[static_cast<size_t>(i)]));
    err = std::fmax(err, std::fabs(y[static_cast<size_t>(i)] - y64[static_cast<size_t>(i)]));
  }
  MESSAGE("max |vitrt - torch64| " << err << " (" << err / scale << " of the largest logit)");
  CHECK(err <= 1e-4 * scale);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t a = 0, a64 = 0;
    for (int64_t j = 1; j < classes; ++j) {
      if (y[static_cast<size_t>(r * classes + j)] > y[static_cast<size_t>(r * classes + a)]) a = j;
      if (y64[static_cast<size_t>(r * classes + j)] > y64[static_cast<size_t>(r * classes + a64)]) a64 = j;
    }
    CHECK(a == a64);
  }
}

}  // namespace

TEST_CASE(
    "exported Fastformer attention (official FastAttention, alone and in a ViT) plans to "
    "FastformerAttention") {
  const std::string dir = test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_fastformer_cases";
  std::ifstream f(dir + "/manifest.json");
  REQUIRE_MESSAGE(f.good(), "missing " << dir << "/manifest.json (its ctest fixture did not run)");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  REQUIRE(manifest["cases"].size() == 2);
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
      auto unfused = test::make_session(model, backend, 2, "fuse_fastformer");
      const auto ops = test::planned_ops(*fused);
      const int fast = ops.count("FastformerAttention") ? ops.at("FastformerAttention") : 0;
      CHECK_MESSAGE(fast == c["blocks"].get<int>(), test::ops_str(ops));
      CHECK_MESSAGE(ops.count("Softmax") == 0, test::ops_str(ops));
      CHECK_MESSAGE(ops.count("MatMul") == 0, test::ops_str(ops));
      CHECK(test::planned_ops(*unfused).count("FastformerAttention") == 0);
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        check_logits(test::run_batch(*fused, x, n), y64, n, classes);
        check_logits(test::run_batch(*unfused, x, n), y64, n, classes);
      }
    }
  }
}
