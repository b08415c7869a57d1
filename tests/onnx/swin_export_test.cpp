// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Swin Transformers as torch.onnx.export writes torchvision's (fixture onnx_swin_cases,
// tools/reference/make_onnx_swin_cases.py: torchvision's own SwinTransformer class, tiny, at opsets 17 and
// 14, with and without window padding): each converts, the mask and padding arithmetic (Mod, ScatterND, Not,
// Where on constants) folds away so no IR op reads constants only, no Dropout or shape op is left, and the
// logits are within the float32-vs-float64 rule of PyTorch's, argmax equal, on ref and cpu at batch 1 and 2;
// every window attention plans as one SoftmaxAttention (the scale on q, the broadcast relative position bias
// and, in shifted blocks, the window mask).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"
#include "ops/op_test_util.h"

using namespace vitrt;

namespace {

// Nodes of the imported graph whose inputs are all constants (what folding should have evaluated).
int constant_only_nodes(const Graph& g) {
  int count = 0;
  for (const Node& n : g.nodes) {
    bool all = true;
    for (int32_t t : n.inputs) all = all && (t == kAbsent || g.tensors[t].is_constant);
    count += all;
  }
  return count;
}

}  // namespace

TEST_CASE("exported tiny Swin Transformers (torchvision's class, opsets 17 and 14) match PyTorch") {
  const std::string dir = test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_swin_cases";
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
    CHECK(constant_only_nodes(g) == 0);
    std::vector<uint8_t> bytes;
    auto model = test::load_graph(g, &bytes);
    std::vector<float> x;
    std::vector<double> y64, y32;
    std::vector<int64_t> xs, ys;
    REQUIRE(read_npy_f32(dir + "/" + name + ".input.npy", &x, &xs).ok());
    REQUIRE(read_npy_f64(dir + "/" + name + ".logits64.npy", &y64, &ys).ok());
    REQUIRE(read_npy_f64(dir + "/" + name + ".logits32.npy", &y32, &ys).ok());
    REQUIRE(xs[2] == c["image"].get<int64_t>());
    const int64_t batch = xs[0], classes = ys[1];
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto s = test::make_session(model, backend, batch);
      // fuse_attention takes every window attention (2 plain, 2 shifted with the window mask): no Softmax
      // or MatMul is left.
      const auto ops = test::planned_ops(*s);
      CHECK_MESSAGE((ops.count("SoftmaxAttention") && ops.at("SoftmaxAttention") == 4 &&
                     !ops.count("Softmax") && !ops.count("MatMul")),
                    test::ops_str(ops));
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        std::vector<float> y(static_cast<size_t>(s->output_shape(n).numel()), NAN);
        st = s->run(x.data(), n, y.data(), y.size());
        REQUIRE_MESSAGE(st.ok(), st.message());
        const size_t count = static_cast<size_t>(n * classes);
        const std::vector<double> want(y64.begin(), y64.begin() + count);
        const test::Comparison cmp =
            test::compare_to_reference(y, want, std::vector<double>(y32.begin(), y32.begin() + count));
        MESSAGE(name << " " << backend << " batch " << n << ": max |vitrt - torch64| " << cmp.max_err
                     << ", tolerance " << cmp.tolerance << "; planned "
                     << test::ops_str(test::planned_ops(*s)));
        CHECK_MESSAGE(cmp.ok, cmp.message);
        for (int64_t b = 0; b < n; ++b) {
          const auto row = y.begin() + b * classes;
          const auto want_row = want.begin() + b * classes;
          CHECK(std::max_element(row, row + classes) - row ==
                std::max_element(want_row, want_row + classes) - want_row);
        }
      }
    }
  }
}
