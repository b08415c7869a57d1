// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Selective Kernel and squeeze-and-excitation blocks as torch.onnx.export writes them (fixture onnx_sk_cases,
// tools/reference/make_onnx_sk_cases.py: the attention survey's SKModule and SEAttention, xmu's SKAttention
// and SEAttention, timm's SelectiveKernel and SEModule, in tiny CNNs): each converts, the SK block plans to
// one SelectiveKernel and the SE block to one SqueezeExcite on ref and cpu, and the logits are within the
// float32-vs-float64 rule of PyTorch's and within 1e-4 of the largest float64 logit, argmax equal, at batch 1
// and 2, fused or not (docs/linear_attention.md, "SE and SK").
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

namespace {

template <class T>
size_t argmax(const T* p, int64_t n) {
  return static_cast<size_t>(std::max_element(p, p + n) - p);
}

}  // namespace

TEST_CASE("exported SK and SE blocks (survey, xmu, timm) plan to SelectiveKernel and SqueezeExcite") {
  const std::string dir = test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_sk_cases";
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
      auto unfused = test::make_session(model, backend, 2, "fuse_selective_kernel,fuse_squeeze_excite");
      const auto ops = test::planned_ops(*fused);
      auto count = [&](const char* op) { return ops.count(op) ? ops.at(op) : 0; };
      CHECK_MESSAGE(count("SelectiveKernel") == c["sk"].get<int>(), test::ops_str(ops));
      CHECK_MESSAGE(count("SqueezeExcite") == c["se"].get<int>(), test::ops_str(ops));
      CHECK_MESSAGE((count("Softmax") == 0 && count("ReduceSum") == 0 && count("Mul") == 0),
                    test::ops_str(ops));
      const auto unfused_ops = test::planned_ops(*unfused);
      CHECK((unfused_ops.count("SelectiveKernel") == 0 && unfused_ops.count("SqueezeExcite") == 0));
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        const size_t count_n = static_cast<size_t>(n * classes);
        const std::vector<double> ref64(y64.begin(), y64.begin() + count_n),
            ref32(y32.begin(), y32.begin() + count_n);
        double scale = 0;
        for (double v : ref64) scale = std::max(scale, std::fabs(v));
        for (Session* s : {fused.get(), unfused.get()}) {
          const std::vector<float> y = test::run_batch(*s, x, n);
          const test::Comparison cmp = test::compare_to_reference(y, ref64, ref32);
          const std::string form = s == fused.get() ? "fused" : "unfused";
          MESSAGE(name << " " << backend << " " << form << " batch " << n << ": max |vitrt - torch64| "
                       << cmp.max_err << ", tolerance " << cmp.tolerance);
          CHECK_MESSAGE(cmp.ok, cmp.message);
          CHECK(cmp.max_err <= 1e-4 * scale);
          for (int64_t b = 0; b < n; ++b)
            CHECK(argmax(y.data() + b * classes, classes) == argmax(ref64.data() + b * classes, classes));
        }
      }
    }
    // Exactness: with the softmax over the channels instead of the branches, the block is not an SK block any
    // more and stays as it is (the SE block still fuses).
    Graph other = g;
    int softmaxes = 0;
    for (Node& n : other.nodes)
      if (n.type == OpType::kSoftmax) {
        std::get<SoftmaxAttrs>(n.attrs).axis = 2;
        ++softmaxes;
      }
    REQUIRE(softmaxes == 1);
    std::vector<uint8_t> other_bytes;
    auto other_model = test::load_graph(other, &other_bytes);
    const auto other_ops = test::planned_ops(*test::make_session(other_model, "cpu", 2, ""));
    CHECK_MESSAGE((other_ops.count("SelectiveKernel") == 0 && other_ops.count("SqueezeExcite") == 1 &&
                   other_ops.count("Softmax") == 1),
                  test::ops_str(other_ops));
  }
}
