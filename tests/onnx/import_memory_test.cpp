// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The importer's memory rules (docs/onnx.md, Cost of an import): vitrt-convert's route frees each
// initializer's data once it is converted and the import forgets a constant after its last reader, with the
// same model file as the plain import; the file is parsed in 1 MiB reads, across which a large initializer
// arrives whole.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "model_writer.h"
#include "onnx/importer.h"
#include "onnx/onnx_file.h"
#include "onnx_build.h"

using namespace vitrt;
using test::add_node;

namespace {

// A float32 initializer stored as raw little-endian bytes (as torch.onnx.export writes weights).
onnx::TensorProto raw_tensor(const std::string& name, std::vector<int64_t> dims, float base) {
  onnx::TensorProto t = test::pattern_tensor(name, std::move(dims), base);
  std::string raw(static_cast<size_t>(t.float_data_size()) * 4, '\0');
  std::memcpy(raw.data(), t.float_data().data(), raw.size());
  t.clear_float_data();
  t.set_raw_data(raw);
  return t;
}

// x [B,4] -> MatMul W -> Relu -> Add b -> MatMul W (the same W, read again three nodes later) -> y: W's
// first reader is node 0, its last node 3.
onnx::ModelProto shared_weight_model() {
  onnx::ModelProto m = test::model_with_input({4});
  onnx::GraphProto* g = m.mutable_graph();
  *g->add_initializer() = raw_tensor("W", {4, 4}, -0.04f);
  *g->add_initializer() = test::pattern_tensor("b", {4}, 0.1f);
  add_node(g, "MatMul", {"x", "W"}, {"a"});
  add_node(g, "Relu", {"a"}, {"r"});
  add_node(g, "Add", {"r", "b"}, {"c"});
  add_node(g, "MatMul", {"c", "W"}, {"y"});
  return m;
}

std::vector<uint8_t> file_bytes(const Graph& g) {
  std::vector<uint8_t> bytes;
  const Status st = write_model_memory(g, &bytes);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return bytes;
}

}  // namespace

TEST_CASE("the releasing import frees the initializers' data and writes the same file as the plain import") {
  const onnx::ModelProto original = shared_weight_model();
  Graph plain, released;
  std::string log;
  Status st = convert::import_onnx(original, convert::OnnxImportOptions{}, &plain, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  onnx::ModelProto given_up = original;
  st = convert::import_onnx_releasing(&given_up, convert::OnnxImportOptions{}, &released, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(file_bytes(plain) == file_bytes(released));

  // Both Linear weights are W transposed: W outlived its first reader.
  int linears = 0;
  const onnx::TensorProto& w = original.graph().initializer(0);
  for (const Node& n : released.nodes) {
    if (n.type != OpType::kLinear) continue;
    ++linears;
    const Tensor& wt = released.tensors[n.inputs[1]];
    REQUIRE(wt.constant.size == 16 * sizeof(float));
    for (int o = 0; o < 4; ++o)
      for (int k = 0; k < 4; ++k) {
        float expect;
        std::memcpy(&expect, w.raw_data().data() + (k * 4 + o) * 4, 4);
        CHECK(wt.f32()[o * 4 + k] == expect);
      }
  }
  CHECK(linears == 2);

  // The given-up model keeps its initializers' names, types and dims, not their data.
  REQUIRE(given_up.graph().initializer_size() == 2);
  for (int k = 0; k < 2; ++k) {
    const onnx::TensorProto& t = given_up.graph().initializer(k);
    CAPTURE(t.name());
    CHECK(t.name() == original.graph().initializer(k).name());
    CHECK(t.dims_size() == original.graph().initializer(k).dims_size());
    CHECK(t.data_type() == onnx::TensorProto::FLOAT);
    CHECK(t.raw_data().empty());
    CHECK(t.float_data_size() == 0);
  }
}

TEST_CASE("a constant that is also a graph output is kept to the end (and refused there as an output)") {
  onnx::ModelProto m = shared_weight_model();
  m.mutable_graph()->add_output()->set_name("W");
  Graph g;
  std::string log;
  const Status st = convert::import_onnx_releasing(&m, convert::OnnxImportOptions{}, &g, &log);
  CHECK(!st.ok());
  CHECK(st.message().find("graph output 'W' is a constant") != std::string::npos);
}

TEST_CASE("a model file is parsed in reads: an initializer larger than one read arrives whole") {
  onnx::ModelProto m = test::model_with_input({1024});
  onnx::GraphProto* g = m.mutable_graph();
  *g->add_initializer() = raw_tensor("W", {1024, 1000}, -0.06f);  // 4 MB: four 1 MiB reads
  add_node(g, "MatMul", {"x", "W"}, {"y"});
  const std::string bytes = m.SerializeAsString();
  char tmpl[] = "/tmp/vitrt-onnx-read-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  REQUIRE(fd >= 0);
  ::close(fd);
  const std::string path = tmpl;
  { std::ofstream(path, std::ios::binary) << bytes; }

  onnx::ModelProto from_file, from_memory;
  Status st = convert::read_onnx_model(path, &from_file);
  CHECK_MESSAGE(st.ok(), st.message());
  st = convert::parse_onnx_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "memory",
                                 &from_memory);
  CHECK_MESSAGE(st.ok(), st.message());
  CHECK(from_file.graph().initializer(0).raw_data() == g->initializer(0).raw_data());
  CHECK(from_file.SerializeAsString() == from_memory.SerializeAsString());

  // The same file one byte short: the initializer's data is cut, and the parse says so.
  { std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 1); }
  st = convert::read_onnx_model(path, &from_file);
  CHECK(!st.ok());
  CHECK(st.message().find("not a valid ONNX model") != std::string::npos);
  ::unlink(path.c_str());
}
