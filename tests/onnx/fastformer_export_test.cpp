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
  const std::string dir = test::export_fixture_dir("onnx_fastformer_cases");
  const nlohmann::json manifest = test::read_export_manifest(dir, 2);
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
      auto unfused = test::make_session(model, backend, 2, "fuse_fastformer");
      const auto ops =
          test::check_fused_plan(*fused, *unfused, "FastformerAttention", c["blocks"].get<int>());
      CHECK_MESSAGE(ops.count("Softmax") == 0, test::ops_str(ops));
      CHECK_MESSAGE(ops.count("MatMul") == 0, test::ops_str(ops));
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        check_logits(test::run_batch(*fused, x, n), y64, n, classes);
        check_logits(test::run_batch(*unfused, x, n), y64, n, classes);
      }
    }
  }
}
