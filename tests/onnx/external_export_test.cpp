// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// External Attention as torch.onnx.export writes it (fixture onnx_external_cases,
// tools/reference/make_onnx_external_cases.py: EAMLP's multi-head Attention and xmu-xiaoma666's
// ExternalAttention in a tiny token net, and a 2-block DeiT-style ViT whose attention is EAMLP's): each
// converts, every attention plans to one ExternalAttention on ref and cpu (fuse_external_attention), the
// logits are within 1e-4 of PyTorch's float64 ones relative to their largest, with the same argmax, at batch
// 1 and 2, and on ref the fused plan gives the unfused plan's exact bits (the reference kernel follows the
// unfused ops).
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

TEST_CASE("exported External Attention (EAMLP, xmu, a ViT with EAMLP attention) plans to ExternalAttention") {
  const std::string dir = test::export_fixture_dir("onnx_external_cases");
  const nlohmann::json manifest = test::read_export_manifest(dir, 3);
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
      auto fused = test::make_session(model, backend, 2, "");
      auto unfused = test::make_session(model, backend, 2, "fuse_external_attention");
      const auto ops =
          test::check_fused_plan(*fused, *unfused, "ExternalAttention", c["attentions"].get<int>());
      CHECK_MESSAGE(ops.count("Softmax") == 0, test::ops_str(ops));
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        const std::vector<float> y = test::run_batch(*fused, x, n), yu = test::run_batch(*unfused, x, n);
        for (int64_t b = 0; b < n; ++b) {
          const auto row = y.begin() + b * classes;
          const auto row64 = y64.begin() + b * classes;
          double largest = 0, err = 0;
          for (int64_t k = 0; k < classes; ++k) {
            largest = std::max(largest, std::fabs(row64[k]));
            err = std::max(err, std::fabs(row[k] - row64[k]));
          }
          MESSAGE(name << " " << backend << " batch " << n << " image " << b << ": max |vitrt - torch64| "
                       << err << " (largest logit " << largest << ")");
          CHECK(err <= 1e-4 * largest);
          CHECK(std::max_element(row, row + classes) - row ==
                std::max_element(row64, row64 + classes) - row64);
        }
        if (backend == "ref") CHECK(y == yu);
      }
    }
  }
}
