// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Performer ViTs as torch.onnx.export writes them (fixture onnx_performer_cases,
// tools/reference/make_onnx_performer_cases.py: vitrt_reference/deit.py with lucidrains' Performer attention,
// softmax kernel at depth 2 and the generalized ReLU kernel at depth 1): each converts, and on ref and cpu
// the logits are within 1e-4 of PyTorch's float64 logits relative to their largest magnitude, with the same
// argmax, at batch 1 and 2, with poisoned activations.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
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

TEST_CASE("exported Performer ViTs (softmax and generalized kernels) match PyTorch's float64 logits") {
  const std::string dir = test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_performer_cases";
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
      auto s = test::make_session(model, backend, 2);
      MESSAGE(name << " " << backend << " plan: " << test::ops_str(test::planned_ops(*s)));
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        const std::vector<float> y = test::run_batch(*s, x, n);
        REQUIRE(y.size() == static_cast<size_t>(n * classes));
        double scale = 0.0, err = 0.0;
        for (size_t i = 0; i < y.size(); ++i) {
          scale = std::fmax(scale, std::fabs(y64[i]));
          err = std::fmax(err, std::fabs(y[i] - y64[i]));
        }
        MESSAGE(name << " " << backend << " batch " << n << ": max |vitrt - torch64| " << err << " of "
                     << scale);
        CHECK(err <= 1e-4 * scale);
        for (int64_t b = 0; b < n; ++b) {
          std::vector<float> want(y64.begin() + b * classes, y64.begin() + (b + 1) * classes);
          CHECK(arg_max(y.data() + b * classes, classes) == arg_max(want.data(), classes));
        }
      }
    }
  }
}
