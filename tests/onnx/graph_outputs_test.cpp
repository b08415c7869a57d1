// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// A vitrt model computes one output. vitrt-convert keeps an ONNX graph's first output, or the one
// --onnx-output names (ConvertOptions::onnx_output), says in its log which outputs it leaves out, and
// imports only the nodes the kept output needs: an output computed by an op vitrt lacks (Hardmax) does not
// stand in the way of another. A name the graph does not have is refused listing the outputs it has; the
// option on a checkpoint is refused too. Nodes nothing kept reads are not imported even with one output.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "arch/arch.h"
#include "onnx/importer.h"
#include "onnx_build.h"

namespace fs = std::filesystem;
using namespace vitrt;

namespace {

// x [B,3,4,4]: logits = Flatten(GlobalAveragePool(Relu(x))) [B,3]; aux = Hardmax(x); gate = Sigmoid(x).
std::string write_three_output_model(const fs::path& dir) {
  onnx::ModelProto m = test::model_with_input({3, 4, 4});
  onnx::GraphProto* g = m.mutable_graph();
  g->mutable_output(0)->set_name("logits");
  g->add_output()->set_name("aux");
  g->add_output()->set_name("gate");
  test::add_node(g, "Relu", {"x"}, {"r"});
  test::add_node(g, "GlobalAveragePool", {"r"}, {"pooled"});
  test::add_node(g, "Flatten", {"pooled"}, {"logits"});
  test::add_node(g, "Hardmax", {"x"}, {"aux"});
  test::add_node(g, "Sigmoid", {"x"}, {"gate"});
  const std::string path = (dir / "three_outputs.onnx").string();
  std::ofstream f(path, std::ios::binary);
  REQUIRE(m.SerializeToOstream(&f));
  return path;
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/vitrt-outputs-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

bool has_op(const Graph& g, OpType type) {
  for (const Node& n : g.nodes)
    if (n.type == type) return true;
  return false;
}

}  // namespace

TEST_CASE(
    "an ONNX graph with several outputs converts to the first or the one named, importing what it needs") {
  TempDir dir;
  const std::string path = write_three_output_model(dir.path);
  SUBCASE("the first by default; the others, one of them unsupported, left out and named in the log") {
    Graph g;
    std::string log;
    const Status st = convert::convert_onnx_file(path, convert::ConvertOptions{}, &g, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    REQUIRE(g.outputs.size() == 1);
    CHECK(g.tensors[g.outputs[0]].shape == Shape{kDynamicDim, 3});
    CHECK(log.find("keeps the graph output 'logits'") != std::string::npos);
    CHECK(log.find("not imported: 'aux', 'gate'") != std::string::npos);
    CHECK_FALSE(has_op(g, OpType::kUnary));  // neither Sigmoid nor Hardmax
  }
  SUBCASE("the one named") {
    convert::ConvertOptions o;
    o.onnx_output = "gate";
    Graph g;
    std::string log;
    const Status st = convert::convert_onnx_file(path, o, &g, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    REQUIRE(g.outputs.size() == 1);
    CHECK(g.tensors[g.outputs[0]].shape == Shape{kDynamicDim, 3, 4, 4});
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].type == OpType::kUnary);
    CHECK(log.find("not imported: 'logits', 'aux'") != std::string::npos);
  }
  SUBCASE("an output vitrt cannot compute, named: the op's error") {
    convert::ConvertOptions o;
    o.onnx_output = "aux";
    Graph g;
    std::string log;
    const Status st = convert::convert_onnx_file(path, o, &g, &log);
    REQUIRE_FALSE(st.ok());
    CHECK_MESSAGE(st.message().find("Hardmax") != std::string::npos, st.message());
  }
  SUBCASE("a name the graph does not have") {
    convert::ConvertOptions o;
    o.onnx_output = "features";
    Graph g;
    std::string log;
    const Status st = convert::convert_onnx_file(path, o, &g, &log);
    REQUIRE_FALSE(st.ok());
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(st.message().find("--onnx-output 'features': the graph has no output of that name (its "
                                    "outputs: 'logits', 'aux', 'gate')") != std::string::npos,
                  st.message());
  }
  SUBCASE("a dropped branch that folds constants badly, a dead node and a repeated output name") {
    // aux2 = x + Reshape(a 6-element constant to [4,4]): folding it is an error, but nothing kept needs it;
    // a Hardmax whose result nothing reads; logits listed twice among the outputs.
    onnx::ModelProto m = test::model_with_input({3, 4, 4});
    onnx::GraphProto* g = m.mutable_graph();
    g->mutable_output(0)->set_name("logits");
    g->add_output()->set_name("aux2");
    g->add_output()->set_name("logits");
    *g->add_initializer() = test::float_tensor("six", {6}, {1, 2, 3, 4, 5, 6});
    *g->add_initializer() = test::int_tensor("shape44", {2}, {4, 4});
    test::add_node(g, "Relu", {"x"}, {"r"});
    test::add_node(g, "GlobalAveragePool", {"r"}, {"pooled"});
    test::add_node(g, "Flatten", {"pooled"}, {"logits"});
    test::add_node(g, "Reshape", {"six", "shape44"}, {"bad"});
    test::add_node(g, "Add", {"x", "bad"}, {"aux2"});
    test::add_node(g, "Hardmax", {"x"}, {"unread"});
    const std::string p2 = (dir.path / "dropped_branch.onnx").string();
    {
      std::ofstream f(p2, std::ios::binary);
      REQUIRE(m.SerializeToOstream(&f));
    }
    Graph out;
    std::string log;
    const Status st = convert::convert_onnx_file(p2, convert::ConvertOptions{}, &out, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(out.outputs.size() == 1);
    CHECK(out.nodes.size() == 3);  // Relu, pool, flatten
    convert::ConvertOptions o;
    o.onnx_output = "aux2";
    const Status bad = convert::convert_onnx_file(p2, o, &out, &log);
    REQUIRE_FALSE(bad.ok());
    CHECK_MESSAGE(bad.message().find("Reshape") != std::string::npos, bad.message());
  }
  SUBCASE("on a checkpoint") {
    convert::ConvertOptions o;
    o.onnx_output = "logits";
    Graph g;
    std::string log;
    const Status st = convert::convert_checkpoint(convert::Checkpoint{}, o, &g, &log);
    REQUIRE_FALSE(st.ok());
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(st.message().find("applies to ONNX models") != std::string::npos, st.message());
  }
}
