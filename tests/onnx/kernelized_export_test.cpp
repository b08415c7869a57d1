// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Efficient Attention and idiap's Linear Transformer as torch.onnx.export writes the official modules
// (fixture onnx_kernelized_cases, tools/reference/make_onnx_kernelized_cases.py: tiny patch-token ViTs, 2
// heads with 24 key and value channels, 4 heads with 16 key and 32 value channels, a near miss; a DeiT with
// idiap's AttentionLayer): each converts, every attention plans to one KernelizedAttention
// (fuse_efficient_attention, fuse_linear_transformer) on ref and cpu with no Softmax left, the near miss to
// none, the logits are within 1e-4 of the largest of PyTorch's float64 logits and have its argmax, at batch 1
// and 2, and the fused plan agrees with the unfused one.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"

using namespace vitrt;

TEST_CASE("exported kernelized-attention ViTs plan to KernelizedAttention and match PyTorch's logits") {
  const std::string dir = test::export_fixture_dir("onnx_kernelized_cases");
  const nlohmann::json manifest = test::read_export_manifest(dir, 4);
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
      auto unfused =
          test::make_session(model, backend, 2, "fuse_efficient_attention,fuse_linear_transformer");
      const auto ops =
          test::check_fused_plan(*fused, *unfused, "KernelizedAttention", c["blocks"].get<int>());
      if (ops.count("KernelizedAttention")) CHECK_MESSAGE(ops.count("Softmax") == 0, test::ops_str(ops));
      for (int64_t n = 1; n <= batch; ++n) {
        CAPTURE(n);
        const std::vector<float> y = test::run_batch(*fused, x, n), yu = test::run_batch(*unfused, x, n);
        double scale = 0, err = 0, err_unfused = 0;
        for (int64_t i = 0; i < n * classes; ++i) {
          scale = std::max(scale, std::abs(y64[i]));
          err = std::max(err, std::abs(y[i] - y64[i]));
          err_unfused = std::max(err_unfused, std::abs(double(y[i]) - yu[i]));
        }
        MESSAGE(name << " " << backend << " batch " << n << ": max |vitrt - torch64| " << err << " of scale "
                     << scale << "; fused vs unfused " << err_unfused);
        CHECK(err <= 1e-4 * scale);
        CHECK(err_unfused <= 1e-4 * scale);
        for (int64_t b = 0; b < n; ++b) {
          const auto row = y.begin() + b * classes;
          const auto row64 = y64.begin() + b * classes;
          CHECK(std::max_element(row, row + classes) - row ==
                std::max_element(row64, row64 + classes) - row64);
        }
      }
    }
  }
}
