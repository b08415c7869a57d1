// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Opsets 7 to 10 read as 11 (onnx/opset_upgrade.h; fixture onnx_old_opset_cases,
// tools/reference/make_onnx_old_opset_cases.py): one net exported at opsets 7 to 11 (Clip-6, Pad-2, Slice-1
// and TopK-1 at 7 to 9; Clip-6 and Pad-2 at 10) converts at each, says what it rewrote, keeps the opset it
// was written at in its metadata, matches PyTorch's float64 logits on ref and cpu at batch 1 and 2, and gives
// the bits of the opset-11 export; at opset 7 with its BatchNormalization-7 left a node it matches PyTorch
// too. Upsample (opset 9) and Resize-10 are refused naming the node; Clip-6 without bounds clamps to the
// lowest and highest float, as its definition says; a mistyped attribute is refused; BatchNormalization-7's
// spatial 1 is read, spatial 0 refused naming the node.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "arch/arch.h"
#include "common/npy.h"
#include "onnx/importer.h"
#include "onnx_build.h"
#include "onnx_test_util.h"

namespace fs = std::filesystem;
using namespace vitrt;

TEST_CASE("ONNX opsets 7 to 10 import as 11: PyTorch's logits and the opset-11 export's bits") {
  const std::string dir = test::export_fixture_dir("onnx_old_opset_cases");
  std::vector<float> x;
  std::vector<int64_t> xs;
  std::vector<double> y64;
  std::vector<int64_t> ys;
  REQUIRE(read_npy_f32(dir + "/net.input.npy", &x, &xs).ok());
  REQUIRE(read_npy_f64(dir + "/net.logits64.npy", &y64, &ys).ok());
  const int64_t classes = ys[1];
  std::map<std::string, std::vector<float>> at11;  // backend + batch -> the opset-11 export's logits
  for (const std::string file : {"11", "10", "9", "8", "7", "7_bn"}) {
    CAPTURE(file);
    const int opset = std::stoi(file);
    const bool bn = file == "7_bn";  // the BatchNorm a node, not folded into the Conv: other bits
    Graph g;
    std::string log;
    const Status st =
        convert::convert_onnx_file(dir + "/net_opset" + file + ".onnx", convert::ConvertOptions{}, &g, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(g.metadata.extra["onnx.opset"] == std::to_string(opset));
    if (opset <= 9)
      CHECK_MESSAGE(log.find("opset " + std::to_string(opset) +
                             " read as opset 11 (rewritten in their opset-11 form: Clip x1, Pad x3, "
                             "Slice x8, TopK x1)") != std::string::npos,
                    log);
    if (opset == 10)
      CHECK_MESSAGE(
          log.find("opset 10 read as opset 11 (rewritten in their opset-11 form: Clip x1, Pad x3)") !=
              std::string::npos,
          log);
    if (opset == 11) CHECK(log.find("read as opset") == std::string::npos);
    std::vector<uint8_t> bytes;
    auto model = test::load_graph(g, &bytes);
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto s = test::make_session(model, backend, 2);
      for (int64_t n = 1; n <= xs[0]; ++n) {
        CAPTURE(n);
        const std::vector<float> y = test::run_batch(*s, x, n);
        REQUIRE(y.size() == static_cast<size_t>(n * classes));
        double largest = 0, err = 0;
        for (size_t i = 0; i < y.size(); ++i) {
          largest = std::max(largest, std::fabs(y64[i]));
          err = std::max(err, std::fabs(y[i] - y64[i]));
        }
        CHECK_MESSAGE(err <= 1e-5 * largest, "max |vitrt - torch64| " << err << ", largest " << largest);
        const std::string key = backend + std::to_string(n);
        if (opset == 11)
          at11[key] = y;
        else if (!bn)
          CHECK(y == at11[key]);
      }
    }
  }
}

TEST_CASE("ONNX opsets 9 and 10: Upsample and Resize-10 are refused naming the node") {
  const std::string dir = test::export_fixture_dir("onnx_old_opset_cases");
  for (int opset : {9, 10}) {
    CAPTURE(opset);
    Graph g;
    std::string log;
    const Status st = convert::convert_onnx_file(dir + "/upsample_opset" + std::to_string(opset) + ".onnx",
                                                 convert::ConvertOptions{}, &g, &log);
    REQUIRE_FALSE(st.ok());
    CHECK(st.code() == StatusCode::kUnsupported);
    const std::string op = opset == 9 ? "(Upsample, opset 9)" : "(Resize, opset 10)";
    CHECK_MESSAGE(st.message().find(op) != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find("re-export at opset 11 or later") != std::string::npos, st.message());
  }
}

// BatchNormalization-7 on [B,3,2,2]: spatial absent or 1 (per channel, as from opset 9) gives the opset-9
// arithmetic; spatial 0 (per element of C x H x W) is refused naming the node, a mistyped one too.
TEST_CASE("ONNX BatchNormalization-7: spatial 1 is read, spatial 0 refused naming the node") {
  char tmpl[] = "/tmp/vitrt-bn7-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  const fs::path dir = tmpl;
  const std::string path = (dir / "bn7.onnx").string();
  onnx::ModelProto m = test::model_with_input({3, 2, 2}, 7);
  auto* g = m.mutable_graph();
  *g->add_initializer() = test::float_tensor("scale", {3}, {2.0f, 0.5f, 3.0f});
  *g->add_initializer() = test::float_tensor("bias", {3}, {1.0f, -1.0f, 0.0f});
  *g->add_initializer() = test::float_tensor("mean", {3}, {0.5f, -0.25f, 1.0f});
  *g->add_initializer() = test::float_tensor("var", {3}, {4.0f, 0.25f, 9.0f});
  onnx::NodeProto* bn = test::add_node(g, "BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
  auto* eps = bn->add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(0.0f);
  auto convert = [&](Graph* out, std::string* log) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    REQUIRE(m.SerializeToOstream(&f));
    f.close();
    return convert::convert_onnx_file(path, convert::ConvertOptions{}, out, log);
  };
  // (x - mean) / sqrt(var) * scale + bias, per channel: each value exact in float.
  const std::vector<float> x = {2.5f, 0.5f, -1.5f, 0.0f, 0.25f, -0.25f, 0.75f, 1.0f, 3.0f, -1.0f, 1.0f, 0.5f};
  const std::vector<float> want = {3.0f, 1.0f,  -1.0f, 0.5f,  -0.5f, -1.0f,
                                   0.0f, 0.25f, 2.0f,  -2.0f, 0.0f,  -0.5f};
  for (const bool given : {false, true}) {
    CAPTURE(given);
    if (given) {
      auto* a = bn->add_attribute();
      a->set_name("spatial");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(1);
    }
    Graph out;
    std::string log;
    const Status st = convert(&out, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(log.find(given ? "BatchNormalization x1" : "no node changed form") != std::string::npos);
    std::vector<uint8_t> bytes;
    auto model = test::load_graph(out, &bytes);
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto s = test::make_session(model, backend, 1);
      CHECK(test::run_batch(*s, x, 1) == want);
    }
  }
  onnx::AttributeProto* spatial = bn->mutable_attribute(bn->attribute_size() - 1);
  spatial->set_i(0);
  Graph out;
  std::string log;
  Status st = convert(&out, &log);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("(BatchNormalization, opset 7): spatial 0 (statistics per element") !=
                    std::string::npos,
                st.message());
  spatial->set_type(onnx::AttributeProto::FLOAT);
  st = convert(&out, &log);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(st.message().find("attribute 'spatial' has the wrong type") != std::string::npos,
                st.message());
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("ONNX Clip-6: absent bounds are the lowest and highest float; a mistyped bound is refused") {
  char tmpl[] = "/tmp/vitrt-clip6-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  const fs::path dir = tmpl;
  const std::string path = (dir / "clip6.onnx").string();
  onnx::ModelProto m = test::model_with_input({1, 2, 2}, 9);
  onnx::NodeProto* clip = test::add_node(m.mutable_graph(), "Clip", {"x"}, {"y"});
  auto convert = [&](Graph* g) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    REQUIRE(m.SerializeToOstream(&f));
    f.close();
    std::string log;
    return convert::convert_onnx_file(path, convert::ConvertOptions{}, g, &log);
  };
  Graph g;
  Status st = convert(&g);
  REQUIRE_MESSAGE(st.ok(), st.message());
  std::vector<uint8_t> bytes;
  auto model = test::load_graph(g, &bytes);
  const float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
  for (const std::string backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    auto s = test::make_session(model, backend, 1);
    const std::vector<float> y = test::run_batch(*s, {inf, -inf, 1.5f, -2.0f}, 1);
    CHECK(y == std::vector<float>{big, -big, 1.5f, -2.0f});
  }
  auto* a = clip->add_attribute();
  a->set_name("min");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(0);
  st = convert(&g);
  REQUIRE_FALSE(st.ok());
  CHECK_MESSAGE(st.message().find("(Clip, opset 9): attribute 'min' has the wrong type") != std::string::npos,
                st.message());
  std::error_code ec;
  fs::remove_all(dir, ec);
}
