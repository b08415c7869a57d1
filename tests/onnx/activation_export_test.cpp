// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Activations as torch.onnx.export writes them (fixture onnx_activation_cases,
// tools/reference/make_onnx_activation_cases.py): a small CNN with nn.PReLU per channel and shared, nn.SELU,
// nn.CELU, torch.atan / tan / asin / acos, and Softsign, Hardshrink, Softshrink, Tanhshrink in their plain-op
// forms, at opsets 12 and 17. The import holds two PRelu ops and the Unary kinds the manifest names, and on
// ref and cpu, with poisoned activations, the logits at batch 1 and 2 are within 1e-4 of PyTorch's float64
// logits relative to their largest magnitude, with the same argmax.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "onnx_test_util.h"
#include "ops/unary_attrs.h"

using namespace vitrt;

TEST_CASE("Exported PReLU, SELU, CELU and trigonometric activations import to their ops and match PyTorch") {
  const std::string dir = test::export_fixture_dir("onnx_activation_cases");
  const nlohmann::json manifest = test::read_export_manifest(dir, 2);
  for (const auto& [name, c] : manifest["cases"].items()) {
    CAPTURE(name);
    test::ExportedCase ec;
    test::load_exported_case(dir, name, "logits64.npy", &ec);
    int prelu = 0;
    std::map<std::string, int> kinds;
    for (const Node& n : ec.model->graph.nodes) {
      prelu += n.type == OpType::kPRelu;
      if (n.type == OpType::kUnary) ++kinds[unary_kind_name(std::get<UnaryAttrs>(n.attrs).kind)];
    }
    CHECK(prelu == c["prelu"].get<int>());
    for (const std::string& kind : c["unary"].get<std::vector<std::string>>()) {
      CAPTURE(kind);
      CHECK(kinds[kind] == 1);
    }
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto s = test::make_session(ec.model, backend, 2);
      for (int64_t n = 1; n <= ec.batch(); ++n) {
        CAPTURE(n);
        test::check_logits(test::run_batch(*s, ec.x, n), ec.y64, n, ec.classes());
      }
    }
  }
}
