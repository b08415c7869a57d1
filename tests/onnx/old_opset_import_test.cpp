// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Opsets 9 and 10 read as 11 (onnx/opset_upgrade.h; fixture onnx_old_opset_cases,
// tools/reference/make_onnx_old_opset_cases.py): one net exported at opsets 9, 10 and 11 (Clip-6, Pad-2,
// Slice-1 and TopK-1 at 9; Clip-6 and Pad-2 at 10) converts at each, says what it rewrote, keeps the opset it
// was written at in its metadata, matches PyTorch's float64 logits on ref and cpu at batch 1 and 2, and gives
// the bits of the opset-11 export. Upsample (opset 9) and Resize-10 are refused naming the node; Clip-6
// without bounds clamps to the lowest and highest float, as its definition says; a mistyped attribute is
// refused.
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

TEST_CASE("ONNX opsets 9 and 10 import as 11: PyTorch's logits and the opset-11 export's bits") {
  const std::string dir = test::export_fixture_dir("onnx_old_opset_cases");
  std::vector<float> x;
  std::vector<int64_t> xs;
  std::vector<double> y64;
  std::vector<int64_t> ys;
  REQUIRE(read_npy_f32(dir + "/net.input.npy", &x, &xs).ok());
  REQUIRE(read_npy_f64(dir + "/net.logits64.npy", &y64, &ys).ok());
  const int64_t classes = ys[1];
  std::map<std::string, std::vector<float>> at11;  // backend + batch -> the opset-11 export's logits
  for (int opset : {11, 10, 9}) {
    CAPTURE(opset);
    Graph g;
    std::string log;
    const Status st = convert::convert_onnx_file(dir + "/net_opset" + std::to_string(opset) + ".onnx",
                                                 convert::ConvertOptions{}, &g, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(g.metadata.extra["onnx.opset"] == std::to_string(opset));
    if (opset == 9)
      CHECK_MESSAGE(log.find("opset 9 read as opset 11 (rewritten in their opset-11 form: Clip x1, Pad x3, "
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
        else
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
