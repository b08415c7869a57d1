// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Nyströmformer attention as torch.onnx.export writes the official code (fixture onnx_nystrom_cases,
// tools/reference/make_onnx_nystrom_cases.py: the attention module in a small patch net in its LRA form — q
// and k / d^(1/4), the global initialisation, the V conv, 17 tokens in 4 landmarks by the T2T rule — and in
// its T2T-ViT form — q / sqrt(d), per-(b,h) initialisation, no conv, segments of 2 — and a small ViT with the
// LRA form in both blocks): each converts, every attention plans to one NystromAttention
// (fuse_nystrom_attention) on ref and cpu, and the logits are within 1e-4 of the largest of PyTorch's float64
// ones at batch 2 and for the first item alone (the global initialisation couples a batch's items, so that
// is another PyTorch run), with its argmax; the unfused plain ops agree too.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"

using namespace vitrt;

namespace {

// max |y − want| / max |want| (NaN-safe: a NaN gives infinity).
double relative_error(const std::vector<float>& y, const std::vector<double>& want, size_t count) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < count; ++i) {
    const double e = std::fabs(y[i] - want[i]);
    err = std::isnan(e) ? INFINITY : std::fmax(err, e);
    scale = std::fmax(scale, std::fabs(want[i]));
  }
  return err / scale;
}

size_t argmax(const double* p, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i)
    if (p[i] > p[best]) best = i;
  return best;
}

}  // namespace

TEST_CASE(
    "exported Nyströmformer attention (module, LRA and T2T forms; small ViT) plans to NystromAttention") {
  const std::string dir = test::export_fixture_dir("onnx_nystrom_cases");
  const nlohmann::json manifest = test::read_export_manifest(dir, 3);
  for (const auto& [name, c] : manifest["cases"].items()) {
    CAPTURE(name);
    test::ExportedCase ec;
    test::load_exported_case(dir, name, "out64.npy", &ec);
    const auto& model = ec.model;
    const std::vector<float>& x = ec.x;
    const std::vector<double>& y64 = ec.y64;
    std::vector<double> first64;
    std::vector<int64_t> fs;
    REQUIRE(read_npy_f64(dir + "/" + name + ".first64.npy", &first64, &fs).ok());
    REQUIRE(ec.batch() == 2);
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = test::make_session(model, backend, 2);
      auto unfused = test::make_session(model, backend, 2, "fuse_nystrom_attention");
      const auto ops =
          test::check_fused_plan(*fused, *unfused, "NystromAttention", c["attentions"].get<int>());
      CHECK(ops.count("Softmax") == 0);
      for (int64_t n : {int64_t{2}, int64_t{1}}) {
        CAPTURE(n);
        const std::vector<double>& want = n == 2 ? y64 : first64;
        const std::vector<float> y = test::run_batch(*fused, x, n), yu = test::run_batch(*unfused, x, n);
        REQUIRE(y.size() == want.size());
        const double e = relative_error(y, want, want.size()), eu = relative_error(yu, want, want.size());
        MESSAGE(name << " " << backend << " batch " << n << ": max |vitrt - torch64| / max |torch64| " << e
                     << " (unfused " << eu << ")");
        CHECK(e <= 1e-4);
        CHECK(eu <= 1e-4);
        const size_t classes = static_cast<size_t>(ec.classes());
        for (size_t b = 0; b < static_cast<size_t>(n); ++b) {
          std::vector<double> yd(y.begin() + b * classes, y.begin() + (b + 1) * classes);
          CHECK(argmax(yd.data(), classes) == argmax(want.data() + b * classes, classes));
        }
      }
    }
  }
}
