// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Squeeze-and-excitation blocks as torch.onnx.export writes them (fixture onnx_se_cases,
// tools/reference/make_onnx_se_cases.py: torchvision's SqueezeExcitation, MobileNetV3's hard-sigmoid and
// EfficientNet's SiLU forms, SENet's Linear form with view(B, C, 1, 1)) in tiny SE-ResNet-like nets: each
// converts, every SE block plans to one SqueezeExcite on ref and cpu, the logits are within the float32-vs-
// float64 rule of PyTorch's at batch 1 and 2, and on ref the fused plan gives the unfused plan's exact bits.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"
#include "ops/op_test_util.h"

using namespace vitrt;

TEST_CASE("exported SE blocks (torchvision, MobileNetV3, EfficientNet, SENet) plan to SqueezeExcite") {
  const std::string dir = test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_se_cases";
  std::ifstream f(dir + "/manifest.json");
  REQUIRE_MESSAGE(f.good(), "missing " << dir << "/manifest.json (its ctest fixture did not run)");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  REQUIRE(manifest["cases"].size() == 3);
  for (const auto& [name, c] : manifest["cases"].items()) {
    CAPTURE(name);
    Graph g;
    std::string log;
    Status st = convert::convert_onnx_file(dir + "/" + name + ".onnx", convert::ConvertOptions{}, &g, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    std::vector<uint8_t> bytes;
    auto model = test::load_graph(g, &bytes);
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
      auto unfused = test::make_session(model, backend, 2, "fuse_squeeze_excite");
      const auto ops = test::planned_ops(*fused);
      const int se = ops.count("SqueezeExcite") ? ops.at("SqueezeExcite") : 0;
      CHECK_MESSAGE(se == c["blocks"].get<int>(), test::ops_str(ops));
      CHECK(ops.count("Mul") == 0);
      CHECK(test::planned_ops(*unfused).count("SqueezeExcite") == 0);
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        const std::vector<float> y = test::run_batch(*fused, x, n), yu = test::run_batch(*unfused, x, n);
        const size_t count = static_cast<size_t>(n * classes);
        const test::Comparison cmp =
            test::compare_to_reference(y, std::vector<double>(y64.begin(), y64.begin() + count),
                                       std::vector<double>(y32.begin(), y32.begin() + count));
        MESSAGE(name << " " << backend << " batch " << n << ": max |vitrt - torch64| " << cmp.max_err
                     << ", tolerance " << cmp.tolerance);
        CHECK_MESSAGE(cmp.ok, cmp.message);
        if (backend == "ref") CHECK(y == yu);
      }
    }
  }
}
