// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// torchvision's classifiers as torch.onnx.export writes them (fixture onnx_zoo,
// tools/reference/make_onnx_zoo.py: random init calibrated on real photographs, opset 17 and for three of
// them 14): each imports in-process, and on ref and cpu its logits for two real images are within the model
// parity rule of PyTorch's float64 logits (tests/models/model_parity_test.cpp: ref within max(8x PyTorch's
// own float32-vs-float64 difference, 4e-7 of the largest logit); both backends within 1e-4 of it), with
// PyTorch's argmax. The fusions each model must plan to are checked, and both opsets must plan to the same
// ops. Prints the table docs/onnx.md quotes.
//
// Its own ctest (onnx_zoo; the `onnx` test leaves it out): the exports are large (1.3 GB) and the run long.
// Under the sanitizers (VITRT_SANITIZED set by tools/test.sh) only the models in kSanitizedModels run, at
// batch 1 (docs/onnx.md, "torchvision zoo"). VITRT_ZOO_MODELS=a,b picks models by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_test_util.h"

using namespace vitrt;

namespace {

// The fused ops each model must plan to, on both backends and every opset (a lost fusion fails).
const std::map<std::string, std::map<std::string, int>> kFused = {
    // The convs' epilogues: every HardSwish, SiLU and residual Add (and ResNet's ReLU after it) goes into the
    // conv before it; MobileNetV3's one Unary left is the HardSwish after its classifier's first Linear.
    {"resnet50", {{"Add", 0}, {"Relu", 0}}},
    {"mobilenet_v3_large", {{"SqueezeExcite", 8}, {"Add", 0}, {"Unary", 1}}},
    {"efficientnet_b0", {{"SqueezeExcite", 16}, {"Add", 0}, {"Unary", 0}}},
    {"regnet_y_400mf", {{"SqueezeExcite", 16}}},
    {"vit_b_16", {{"SoftmaxAttention", 12}}},
    // Window attention: 6 plain blocks, 5 shifted ones (the window mask) and the last stage's second block,
    // unshifted because its 7x7 grid is one window.
    {"swin_t", {{"SoftmaxAttention", 12}, {"Softmax", 0}, {"MatMul", 0}}},
};

// Under ASan + UBSan: the models under 30 MB, which still cover SqueezeExcite, channel shuffles, DenseNet's
// 25-input Concats with BatchNorm after them, and ceil-mode pools; resnet50, convnext_tiny and vit_b_16 (1 GB
// of exports, 90% of the plain run's 25 s of CPU) are left to the plain run.
const std::set<std::string> kSanitizedModels = {"mobilenet_v3_large", "efficientnet_b0", "regnet_y_400mf",
                                                "shufflenet_v2_x1_0", "densenet121",     "googlenet"};

// VITRT_ZOO_MODELS, else `only` when not empty, else every model of the manifest.
std::set<std::string> selected_models(const nlohmann::json& manifest, const std::set<std::string>& only) {
  std::set<std::string> out;
  const std::string pick = test::env_or("VITRT_ZOO_MODELS", "");
  std::stringstream ss(pick);
  for (std::string m; std::getline(ss, m, ',');)
    if (!m.empty()) out.insert(m);
  if (!out.empty()) return out;
  for (const auto& [name, m] : manifest["models"].items())
    if (only.empty() || only.count(name)) out.insert(name);
  return out;
}

int count(const std::map<std::string, int>& ops, const std::string& op) {
  const auto it = ops.find(op);
  return it == ops.end() ? 0 : it->second;
}

// The planned graph in a line: the fused ops and epilogues, then every op type with its count.
std::string fusions(const Session& s) {
  int conv_act = 0, conv_nhwc = 0, conv_res = 0, linear_act = 0, linear_res = 0;
  for (const Node& n : s.graph().nodes) {
    if (n.type == OpType::kConv2d) {
      const auto& a = std::get<Conv2dAttrs>(n.attrs);
      conv_act += a.activation != Activation::kNone;
      conv_nhwc += a.channels_last;
      conv_res += n.inputs.size() > 3 && n.inputs[3] != kAbsent;
    } else if (n.type == OpType::kLinear) {
      linear_act += std::get<LinearAttrs>(n.attrs).activation != Activation::kNone;
      linear_res += n.inputs.size() > 3 && n.inputs[3] != kAbsent;
    }
  }
  const auto ops = test::planned_ops(s);
  std::ostringstream o;
  for (const char* op : {"SqueezeExcite", "SoftmaxAttention", "ConvMlp"})
    if (count(ops, op)) o << op << " " << count(ops, op) << ", ";
  if (conv_act) o << "Conv+act " << conv_act << ", ";
  if (conv_nhwc) o << "Conv NHWC " << conv_nhwc << ", ";
  if (conv_res) o << "Conv+residual " << conv_res << ", ";
  if (linear_act) o << "Linear+act " << linear_act << ", ";
  if (linear_res) o << "Linear+residual " << linear_res << ", ";
  o << "[" << test::ops_str(ops) << "]";
  return o.str();
}

int argmax(const float* v, int64_t n) {
  return static_cast<int>(std::max_element(v, v + n) - v);
}

// Every model of the manifest in `dir` (make_onnx_zoo.py's form), each of its exports on ref and cpu: the
// logits and argmax against PyTorch's float64 ones, the fusions `fused` names, and one plan for all exports.
// Under the sanitizers only `sanitized_models` (every model when empty), at batch 1.
// `same_plan`: every export of a model must plan to the same ops (one exporter at several opsets; the dynamo
// and TorchScript exporters write global pooling differently: ReduceMean against GlobalAveragePool).
void check_export_set(const std::string& dir, const std::map<std::string, std::map<std::string, int>>& fused,
                      const std::set<std::string>& sanitized_models, bool same_plan) {
  std::ifstream f(dir + "/manifest.json");
  REQUIRE_MESSAGE(f.good(), "missing " << dir << "/manifest.json (its ctest fixture did not run)");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  for (const auto& [name, ops] : fused) CHECK_MESSAGE(manifest["models"].contains(name), "no " << name);
  for (const auto& name : sanitized_models) CHECK_MESSAGE(manifest["models"].contains(name), "no " << name);
  const bool sanitized = !test::env_or("VITRT_SANITIZED", "").empty();
  std::vector<float> x;
  std::vector<int64_t> xs;
  REQUIRE(read_npy_f32(dir + "/input.npy", &x, &xs).ok());
  REQUIRE(xs.size() == 4);
  const int64_t batch = sanitized ? 1 : xs[0];
  const std::set<std::string> models =
      selected_models(manifest, sanitized ? sanitized_models : std::set<std::string>{});
  REQUIRE(!models.empty());
  std::printf(
      "| model | opset | backend | batch | max rel. error | tolerance | argmax | planned fusions |\n");
  for (const std::string& name : models) {
    CAPTURE(name);
    REQUIRE_MESSAGE(manifest["models"].contains(name), "no model " << name << " in " << dir);
    const nlohmann::json& m = manifest["models"][name];
    std::vector<double> y64;
    std::vector<int64_t> ys;
    REQUIRE(read_npy_f64(dir + "/" + name + ".logits64.npy", &y64, &ys).ok());
    REQUIRE(ys.size() == 2);
    const int64_t classes = ys[1];
    const double d32 = m["max_abs_f32_vs_f64"], scale = m["max_abs_logit"];
    const double ref_tol = std::max(8.0 * d32, 4e-7 * scale), tol = 1e-4 * scale;
    std::map<std::string, std::map<std::string, int>> ops_of_first_opset;  // backend -> planned ops
    for (const auto& [opset, file] : m["onnx"].items()) {
      CAPTURE(opset);
      std::vector<uint8_t> bytes;
      std::shared_ptr<const Model> model;
      {
        Graph g;
        std::string log;
        Status st = convert::convert_onnx_file(dir + "/" + file.get<std::string>(), convert::ConvertOptions{},
                                               &g, &log);
        REQUIRE_MESSAGE(st.ok(), st.message());
        model = test::load_graph(g, &bytes);
      }
      for (const std::string backend : {"ref", "cpu"}) {
        CAPTURE(backend);
        auto s = test::make_session(model, backend, batch);
        const auto ops = test::planned_ops(*s);
        if (fused.count(name))
          for (const auto& [op, want] : fused.at(name)) {
            CAPTURE(op);
            CHECK_MESSAGE(count(ops, op) == want, test::ops_str(ops));
          }
        if (!ops_of_first_opset.count(backend)) ops_of_first_opset[backend] = ops;
        const bool plan_ok = !same_plan || ops == ops_of_first_opset[backend];
        CHECK_MESSAGE(plan_ok, "opset " << opset << ": " << test::ops_str(ops)
                                        << "\nfirst opset: " << test::ops_str(ops_of_first_opset[backend]));
        std::vector<float> y(static_cast<size_t>(batch * classes), NAN);
        Status st = s->run(x.data(), batch, y.data(), y.size());
        REQUIRE_MESSAGE(st.ok(), st.message());
        double err = 0;
        for (size_t i = 0; i < y.size(); ++i) {
          REQUIRE_MESSAGE(std::isfinite(y[i]), "logit " << i << " is not finite");
          err = std::max(err, std::fabs(double(y[i]) - y64[i]));
        }
        std::string top1;
        for (int64_t b = 0; b < batch; ++b) {
          const int got = argmax(y.data() + b * classes, classes), want = m["argmax"][b];
          CHECK_MESSAGE(got == want, "image " << b);
          top1 += (b ? " " : "") + std::to_string(got) +
                  (got == want ? "" : " (torch " + std::to_string(want) + ")");
        }
        const double allowed = backend == "ref" ? std::min(ref_tol, tol) : tol;
        CHECK_MESSAGE(err <= allowed, "max |vitrt - torch64| " << err << " > " << allowed
                                                               << " (torch32 vs torch64 " << d32
                                                               << ", max |logit| " << scale << ")");
        std::printf("| %s | %s | %s | %lld | %.1e | %.1e | %s | %s |\n", name.c_str(), opset.c_str(),
                    backend.c_str(), static_cast<long long>(batch), err / scale, allowed / scale,
                    top1.c_str(), fusions(*s).c_str());
        std::fflush(stdout);
      }
    }
  }
}

}  // namespace

TEST_CASE("torchvision zoo: exported classifiers match PyTorch's float64 logits on ref and cpu") {
  check_export_set(test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_zoo", kFused, kSanitizedModels,
                   true);
}

// Exports by a current PyTorch (tests/data/onnx_torch2.tar.xz, made by tools/reference/make_torch2_exports.py
// with torch 2.11: the dynamo exporter at its default opset 20 and at 18, the TorchScript one at 17; small
// torchvision and timm models at 64x64). Unpacked by the fixture onnx_torch2.
TEST_CASE("torch 2 exports: dynamo and TorchScript exports match PyTorch's float64 logits on ref and cpu") {
  // Every attention planned to the fused op whatever the exporter (timm's F.scaled_dot_product_attention
  // with its scale split over q and k, torchvision's nn.MultiheadAttention under torch 2, PVT v2's reduced
  // keys, Swin's windows, Swin V2's cosine attention with its per-head scale), and the CNNs' epilogues. Every
  // one of Swin V2's normalising ReduceL2s and Divs goes into the fused op.
  const std::map<std::string, std::map<std::string, int>> fused = {
      {"tv_vit", {{"SoftmaxAttention", 2}, {"Softmax", 0}, {"MatMul", 0}}},
      {"timm_vit_sdpa", {{"SoftmaxAttention", 2}, {"Softmax", 0}, {"MatMul", 0}}},
      {"timm_vit_eager", {{"SoftmaxAttention", 2}, {"Softmax", 0}}},
      {"timm_pvt_v2", {{"SoftmaxAttention", 4}, {"Softmax", 0}}},
      {"tv_swin", {{"SoftmaxAttention", 4}, {"Softmax", 0}}},
      {"tv_swin_v2", {{"SoftmaxAttention", 4}, {"Softmax", 0}, {"Reduce", 0}, {"Div", 0}}},
      {"tv_efficientnet", {{"SqueezeExcite", 7}}},
      {"tv_mobilenet_v3", {{"SqueezeExcite", 9}}},
      {"tv_mobilenet_v2", {{"Unary", 0}}},  // every ReLU6 (Clip 0..6) into the conv before it
      {"tv_regnet", {{"SqueezeExcite", 4}}},
      {"tv_convnext", {{"Gelu", 0}}},  // into the Linear before it, in either GELU form
  };
  check_export_set(test::env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_torch2", fused, {}, false);
}
