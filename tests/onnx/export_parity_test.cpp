// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The project's reference models exported by torch.onnx.export at opsets 14 and 17 (fixture onnx_cases,
// tools/reference/make_onnx_cases.py: DeiT, PVT v2 b0, a small LaViT, a small SOFT) against the same weights
// converted from the checkpoint: logits within 1e-5 of the .pth route (relative to its largest logit; SOFT's
// stem BatchNorm is folded by torch in float32 and by vitrt-convert in double, measured 2e-6 apart) on ref
// and cpu, the same top-1 as PyTorch, and the same planned op types, among them each model's fused ops
// (fuse_attention, the channels-last convs and ConvMlp find the exported attention, residuals and MLPs).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "arch/arch.h"
#include "checkpoint/checkpoint.h"
#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"

using namespace vitrt;

namespace {

// The fused ops each case must plan to on both routes (so that both losing a fusion fails too).
const std::map<std::string, std::map<std::string, int>> kFused = {
    {"deit_tiny_2layer", {{"SoftmaxAttention", 2}}},
    {"deit_tiny_distilled_1layer", {{"SoftmaxAttention", 1}}},
    {"pvt_v2_b0_1111", {{"SoftmaxAttention", 4}, {"ConvMlp", 2}}},  // stages 1-2 (fuse_conv_mlp)
    {"lavit_1222_narrow",
     {{"SoftmaxAttention", 4}, {"ReusedAttention", 3}, {"AttentionResidual", 3}, {"ConvMlp", 3}}},
    {"soft_1111_narrow", {{"LinearAttention", 3}, {"SoftmaxAttention", 1}}},  // stages 1-3, stage 4
};

// Every attribute of each planned LinearAttention, in plan order: the exported form must fuse to the very op
// the .pth route builds (its q scale is 1 / fl(d^{1/4}) on one route and fl(d^{-1/4}) on the other).
std::vector<std::string> linear_attention_attrs(const Session& s) {
  std::vector<std::string> out;
  for (const Node& n : s.graph().nodes) {
    if (n.type != OpType::kLinearAttention) continue;
    const auto& a = std::get<LinearAttentionAttrs>(n.attrs);
    std::ostringstream o;
    o.precision(9);
    o << "heads " << a.num_heads << " grid " << a.height << "x" << a.width << " q_scale " << a.q_scale
      << " kernel " << int(a.kernel) << " landmarks " << int(a.landmarks) << " ratio " << a.landmark_ratio
      << " ln_eps " << a.landmark_ln_eps << " pinv " << int(a.pinv) << " iterations " << a.newton_iterations
      << " regularizer " << a.newton_regularizer << " symmetric " << a.symmetric_normalization;
    out.push_back(o.str());
  }
  return out;
}

}  // namespace

TEST_CASE("exported reference models: the ONNX route matches the .pth route") {
  const std::string dir = test::onnx_fixture_dir();
  std::ifstream f(dir + "/manifest.json");
  REQUIRE_MESSAGE(f.good(), "missing " << dir << "/manifest.json (its ctest fixture did not run)");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  REQUIRE(!manifest["cases"].empty());
  for (const auto& [name, c] : manifest["cases"].items()) {
    CAPTURE(name);
    convert::Checkpoint ckpt;
    REQUIRE(convert::load_checkpoint(dir + "/" + c["checkpoint"].get<std::string>(), &ckpt).ok());
    Graph pth_graph;
    std::string log;
    Status st = convert::convert_checkpoint(ckpt, convert::ConvertOptions{}, &pth_graph, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    std::vector<uint8_t> pth_bytes;
    auto pth = test::load_graph(pth_graph, &pth_bytes);
    std::vector<float> x, torch_logits;
    std::vector<int64_t> xs, ls;
    REQUIRE(read_npy_f32(dir + "/" + c["input"].get<std::string>(), &x, &xs).ok());
    REQUIRE(read_npy_f32(dir + "/" + c["logits"].get<std::string>(), &torch_logits, &ls).ok());
    const int64_t batch = xs[0], classes = ls[1];
    REQUIRE_MESSAGE(kFused.count(name), "no expected fusions listed for " << name);
    for (const auto& [opset, path] : c["onnx"].items()) {
      CAPTURE(opset);
      Graph onnx_graph;
      std::string onnx_log;
      st = convert::convert_onnx_file(dir + "/" + path.get<std::string>(), convert::ConvertOptions{},
                                      &onnx_graph, &onnx_log);
      REQUIRE_MESSAGE(st.ok(), st.message());
      CHECK(onnx_graph.metadata.preprocess.crop_h == pth_graph.metadata.preprocess.crop_h);
      std::vector<uint8_t> onnx_bytes;
      auto onnx = test::load_graph(onnx_graph, &onnx_bytes);
      for (const std::string backend : {"ref", "cpu"}) {
        CAPTURE(backend);
        auto a = test::make_session(onnx, backend, batch);
        auto b = test::make_session(pth, backend, batch);
        const auto ops_a = test::planned_ops(*a), ops_b = test::planned_ops(*b);
        CHECK_MESSAGE(ops_a == ops_b, "onnx: " << test::ops_str(ops_a) << "\n.pth: " << test::ops_str(ops_b));
        for (const auto& [op, count] : kFused.at(name)) {
          CAPTURE(op);
          CHECK((ops_a.count(op) ? ops_a.at(op) : 0) == count);
        }
        CHECK(linear_attention_attrs(*a) == linear_attention_attrs(*b));
        for (int64_t n = 1; n <= batch; ++n) {
          CAPTURE(n);
          const std::vector<float> ya = test::run_batch(*a, x, n), yb = test::run_batch(*b, x, n);
          double worst = 0, scale = 0;
          for (size_t i = 0; i < yb.size(); ++i) {
            REQUIRE(std::isfinite(ya[i]));
            worst = std::max(worst, std::fabs(double(ya[i]) - yb[i]));
            scale = std::max(scale, std::fabs(double(yb[i])));
          }
          MESSAGE(name << " opset " << opset << " " << backend << " batch " << n
                       << ": max |onnx - pth| / max |pth| = " << worst / scale);
          CHECK(worst <= 1e-5 * scale);
          for (int64_t i = 0; i < n; ++i) {
            const auto top1 = [&](const float* y) { return std::max_element(y, y + classes) - y; };
            CHECK(top1(ya.data() + i * classes) == top1(torch_logits.data() + i * classes));
          }
        }
      }
    }
  }
}
