// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// An image input exported with every dimension symbolic (Hugging Face optimum writes [batch_size,
// num_channels, height, width]): --image-size resolves height and width, and the channels are read from the
// Conv that takes the input (weight [O, C/group, kH, kW] times the group), named in the log. Without
// --image-size, or when no Conv tells the channels (another op reads the input, or two Convs disagree), the
// conversion is refused naming the dimension.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "arch/arch.h"
#include "onnx/importer.h"
#include "onnx_build.h"
#include "onnx_test_util.h"

namespace fs = std::filesystem;
using namespace vitrt;

namespace {

// x [batch_size, num_channels, height, width] -> Conv (4 out, or 2·group, 2x2 stride 2, `group`) ->
// GlobalAveragePool -> Flatten -> y; `second`: another op reading x as well ("Conv1": a Conv of one input
// channel; "Relu", followed by a Conv of 3).
onnx::ModelProto symbolic_model(int64_t group, const std::string& second = "") {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("vitrt-test");
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (const char* d : {"batch_size", "num_channels", "height", "width"})
    tt->mutable_shape()->add_dim()->set_dim_param(d);
  g->add_output()->set_name("y");
  const int64_t out = group == 1 ? 4 : 2 * group;
  *g->add_initializer() = test::pattern_tensor("w", {out, 3 / group, 2, 2}, -0.05f);
  onnx::NodeProto* conv = test::add_node(g, "Conv", {"x", "w"}, {"c"});
  test::set_ints(conv, "strides", {2, 2});
  test::set_int(conv, "group", group);
  test::add_node(g, "GlobalAveragePool", {"c"}, {"p"});
  if (second == "Conv1") {
    *g->add_initializer() = test::pattern_tensor("w1", {4, 1, 2, 2}, 0.02f);
    test::add_node(g, "Conv", {"x", "w1"}, {"c1"});
    test::add_node(g, "GlobalAveragePool", {"c1"}, {"p1"});
    test::add_node(g, "Add", {"p", "p1"}, {"p2"});
    test::add_node(g, "Flatten", {"p2"}, {"y"});
  } else if (second == "Relu") {
    test::add_node(g, "Relu", {"x"}, {"r"});
    *g->add_initializer() = test::pattern_tensor("w2", {4, 3, 2, 2}, 0.03f);
    test::add_node(g, "Conv", {"r", "w2"}, {"c2"});
    test::add_node(g, "GlobalAveragePool", {"c2"}, {"pr"});
    test::add_node(g, "Add", {"p", "pr"}, {"p2"});
    test::add_node(g, "Flatten", {"p2"}, {"y"});
  } else {
    test::add_node(g, "Flatten", {"p"}, {"y"});
  }
  return m;
}

Status convert_model(const onnx::ModelProto& m, int image_size, Graph* g, std::string* log) {
  char tmpl[] = "/tmp/vitrt-symbolic-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  const fs::path dir = tmpl;
  const std::string path = (dir / "model.onnx").string();
  {
    std::ofstream f(path, std::ios::binary);
    REQUIRE(m.SerializeToOstream(&f));
  }
  convert::ConvertOptions o;
  o.image_size = image_size;
  const Status st = convert::convert_onnx_file(path, o, g, log);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return st;
}

}  // namespace

TEST_CASE("an input with symbolic channels, height and width: --image-size and the first Conv's channels") {
  for (int64_t group : {1, 3}) {
    CAPTURE(group);
    Graph g;
    std::string log;
    const Status st = convert_model(symbolic_model(group), 8, &g, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(g.tensors[g.inputs[0]].shape == Shape{kDynamicDim, 3, 8, 8});
    CHECK_MESSAGE(
        log.find("dimension 1 ('num_channels') resolved to 3, the channels of Conv") != std::string::npos,
        log);
    CHECK(log.find("dimension 2 ('height') resolved to --image-size 8") != std::string::npos);
    std::vector<uint8_t> bytes;
    auto model = test::load_graph(g, &bytes);
    auto s = test::make_session(model, "ref", 1);
    const std::vector<float> y = test::run_batch(*s, std::vector<float>(3 * 8 * 8, 0.5f), 1);
    CHECK(y.size() == (group == 1 ? 4u : 6u));
  }
}

TEST_CASE("an input with symbolic channels is refused where no Conv tells them, or without --image-size") {
  struct Case {
    const char* what;
    std::string second;
    int image_size;
    const char* needle;
  };
  for (const Case& c : {Case{"no --image-size", "", 0, "dimension 2 is symbolic ('height')"},
                        Case{"two Convs disagree", "Conv1", 8, "dimension 1 is symbolic ('num_channels')"},
                        Case{"a Relu reads it too", "Relu", 8, ""}}) {
    CAPTURE(c.what);
    Graph g;
    std::string log;
    const Status st = convert_model(symbolic_model(1, c.second), c.image_size, &g, &log);
    if (c.second == "Relu") {  // the Conv still tells the channels; the Relu reads any
      REQUIRE_MESSAGE(st.ok(), st.message());
      CHECK(g.tensors[g.inputs[0]].shape == Shape{kDynamicDim, 3, 8, 8});
      continue;
    }
    REQUIRE_FALSE(st.ok());
    CHECK_MESSAGE(st.message().find(c.needle) != std::string::npos, st.message());
  }
}
