// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Malformed and unsupported ONNX files through vitrt-convert: each is refused with exit code 2 and a message
// naming what is wrong (the node, op type and opset for ops), never a crash. Also the positive side of
// external data: weights in a file next to the model convert to the same logits as embedded ones.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx_build.h"
#include "onnx_test_util.h"

namespace fs = std::filesystem;
using namespace vitrt;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/vitrt-onnx-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

onnx::TensorProto float_tensor(const std::string& name, std::vector<int64_t> dims, float base) {
  return test::pattern_tensor(name, std::move(dims), base);
}

using test::add_node;

// image [B,3,8,8] -> Conv 2x3x2x2 stride 2 -> Relu -> GlobalAveragePool -> Flatten -> Gemm (5 classes).
onnx::ModelProto tiny_model(int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("vitrt-test");
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("tiny");
  auto* in = g->add_input();
  in->set_name("image");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  for (int64_t d : {3, 8, 8}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  *g->add_initializer() = float_tensor("conv.w", {2, 3, 2, 2}, -0.05f);
  *g->add_initializer() = float_tensor("conv.b", {2}, 0.1f);
  *g->add_initializer() = float_tensor("fc.w", {5, 2}, -0.03f);
  *g->add_initializer() = float_tensor("fc.b", {5}, 0.2f);
  auto* conv = add_node(g, "Conv", {"image", "conv.w", "conv.b"}, {"c"});
  auto* a = conv->add_attribute();
  a->set_name("strides");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(2);
  a->add_ints(2);
  add_node(g, "Relu", {"c"}, {"r"});
  add_node(g, "GlobalAveragePool", {"r"}, {"p"});
  add_node(g, "Flatten", {"p"}, {"f"});
  auto* gemm = add_node(g, "Gemm", {"f", "fc.w", "fc.b"}, {"logits"});
  auto* tb = gemm->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  g->add_output()->set_name("logits");
  return m;
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f << bytes;
}

// Runs vitrt-convert MODEL -o OUT; returns the exit code and fills `err` with its stderr.
int run_convert(const fs::path& model, const fs::path& out, std::string* err, const std::string& flags = "") {
  const std::string bin = test::env_or("VITRT_BINARY_DIR", ".") + "/bin/vitrt-convert";
  REQUIRE_MESSAGE(fs::exists(bin), bin << " is not built");
  const fs::path log = out.string() + ".log";
  const std::string cmd = "'" + bin + "' '" + model.string() + "' -o '" + out.string() + "' " + flags +
                          " >/dev/null 2>'" + log.string() + "'";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(log);
  std::stringstream ss;
  ss << f.rdbuf();
  *err = ss.str();
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

void expect_refused(const onnx::ModelProto& m, const std::string& needle, const std::string& raw = "") {
  TempDir dir;
  const fs::path model = dir.path / "model.onnx";
  write_bytes(model, raw.empty() ? m.SerializeAsString() : raw);
  std::string err;
  const int rc = run_convert(model, dir.path / "out.vitrt", &err);
  CAPTURE(err);
  CHECK(rc == 2);
  CHECK(err.find(needle) != std::string::npos);
  CHECK(err.find("internal error") == std::string::npos);
  CHECK(!fs::exists(dir.path / "out.vitrt"));
}

}  // namespace

TEST_CASE("a tiny valid ONNX model converts") {
  TempDir dir;
  write_bytes(dir.path / "tiny.onnx", tiny_model().SerializeAsString());
  std::string err;
  CHECK(run_convert(dir.path / "tiny.onnx", dir.path / "tiny.vitrt", &err) == 0);
  CHECK(fs::exists(dir.path / "tiny.vitrt"));
}

TEST_CASE("preprocessing flags on the ONNX route: the checkpoint route's rules (one shared function)") {
  TempDir dir;
  write_bytes(dir.path / "tiny.onnx", tiny_model().SerializeAsString());
  std::string err;
  CHECK(run_convert(dir.path / "tiny.onnx", dir.path / "ok.vitrt", &err,
                    "--interp bilinear --mean 0.5 --std 0.25") == 0);
  CHECK(fs::exists(dir.path / "ok.vitrt"));
  const struct {
    const char* flags;
    const char* needle;
  } refused[] = {{"--crop 3", "differs from the model input size"},
                 {"--mean 0.1,0.2", "--mean needs 1 or"},
                 {"--interp nearest", "--interp must be bilinear or bicubic"}};
  for (const auto& r : refused) {
    CAPTURE(r.flags);
    const fs::path out = dir.path / "refused.vitrt";
    CHECK(run_convert(dir.path / "tiny.onnx", out, &err, r.flags) != 0);
    CAPTURE(err);
    CHECK(err.find(r.needle) != std::string::npos);
    CHECK(!fs::exists(out));
  }
}

TEST_CASE("malformed ONNX files are refused with exit 2 and a clear message") {
  SUBCASE("truncated protobuf") {
    const std::string bytes = tiny_model().SerializeAsString();
    expect_refused({}, "not a valid ONNX model", bytes.substr(0, bytes.size() / 2));
  }
  SUBCASE("missing initializer") {
    onnx::ModelProto m = tiny_model();
    m.mutable_graph()->mutable_initializer()->RemoveLast();  // fc.b
    expect_refused(m, "reads 'fc.b', which is neither a graph input, an initializer");
  }
  SUBCASE("cyclic graph") {
    onnx::ModelProto m = tiny_model();
    // Relu reads the Flatten output, which depends on the Relu's own output.
    m.mutable_graph()->mutable_node(1)->set_input(0, "f");
    expect_refused(m, "the graph is cyclic or not topologically sorted");
  }
  SUBCASE("wrong-rank initializer") {
    onnx::ModelProto m = tiny_model();
    *m.mutable_graph()->mutable_initializer(2) = float_tensor("fc.w", {5, 2, 1}, 0.0f);
    expect_refused(m, "node 'Gemm_logits' (Gemm, opset 17): B must be a constant 2-D float matrix");
  }
  SUBCASE("initializer data shorter than its shape") {
    onnx::ModelProto m = tiny_model();
    m.mutable_graph()->mutable_initializer(0)->mutable_float_data()->RemoveLast();
    expect_refused(m, "initializer 'conv.w': holds 23 values, but its shape [2,3,2,2] needs 24");
  }
  SUBCASE("unsupported op names the node, op type and opset") {
    onnx::ModelProto m = tiny_model();
    m.mutable_graph()->mutable_node(1)->set_op_type("Hardmax");
    expect_refused(m, "(Hardmax, opset 17): op type 'Hardmax' is not supported");
  }
  SUBCASE("unsupported attribute") {
    onnx::ModelProto m = tiny_model();
    auto* a = m.mutable_graph()->mutable_node(3)->add_attribute();
    a->set_name("colour");
    a->set_type(onnx::AttributeProto::INT);
    expect_refused(m, "(Flatten, opset 17): attribute 'colour' is not supported");
  }
  SUBCASE("opset outside 7-25") {
    expect_refused(tiny_model(6), "uses ONNX opset 6; supported are opsets 7 to 25");
    expect_refused(tiny_model(26), "uses ONNX opset 26; supported are opsets 7 to 25");
  }
  SUBCASE("a second input") {
    onnx::ModelProto m = tiny_model();
    *m.mutable_graph()->add_input() = m.graph().input(0);
    m.mutable_graph()->mutable_input(1)->set_name("other");
    expect_refused(m, "more than one input");
  }
}

namespace {

// The model with fc.w moved into `location` (relative to the model) at `offset`, the data file written at
// data_path (when not empty).
onnx::ModelProto with_external(const std::string& location, uint64_t offset, const fs::path& data_path) {
  onnx::ModelProto m = tiny_model();
  onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(2);
  std::string raw(static_cast<size_t>(offset), '\0');
  for (float v : w->float_data()) raw.append(reinterpret_cast<const char*>(&v), sizeof v);
  if (!data_path.empty()) write_bytes(data_path, raw);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [w](const char* k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", std::to_string(offset));
  kv("length", "40");
  return m;
}

}  // namespace

TEST_CASE("external data: read from next to the model, never from outside its directory") {
  TempDir dir;
  fs::create_directory(dir.path / "m");
  SUBCASE("a file next to the model gives the same logits as embedded weights") {
    write_bytes(dir.path / "m" / "model.onnx", with_external("weights/fc.bin", 16, "").SerializeAsString());
    fs::create_directory(dir.path / "m" / "weights");
    with_external("weights/fc.bin", 16, dir.path / "m" / "weights" / "fc.bin");
    write_bytes(dir.path / "embedded.onnx", tiny_model().SerializeAsString());
    std::string err;
    REQUIRE(run_convert(dir.path / "m" / "model.onnx", dir.path / "ext.vitrt", &err) == 0);
    REQUIRE(run_convert(dir.path / "embedded.onnx", dir.path / "emb.vitrt", &err) == 0);
    std::shared_ptr<const Model> a, b;
    REQUIRE(load_model((dir.path / "ext.vitrt").string(), &a).ok());
    REQUIRE(load_model((dir.path / "emb.vitrt").string(), &b).ok());
    auto sa = test::make_session(a, "ref", 1), sb = test::make_session(b, "ref", 1);
    std::vector<float> x(3 * 8 * 8);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
    std::vector<float> ya(5, NAN), yb(5, NAN);
    REQUIRE(sa->run(x.data(), 1, ya.data(), 5).ok());
    REQUIRE(sb->run(x.data(), 1, yb.data(), 5).ok());
    CHECK(ya == yb);
  }
  auto refuse = [&](const onnx::ModelProto& m, const std::string& needle) {
    write_bytes(dir.path / "m" / "model.onnx", m.SerializeAsString());
    std::string err;
    CHECK(run_convert(dir.path / "m" / "model.onnx", dir.path / "out.vitrt", &err) == 2);
    CAPTURE(err);
    CHECK(err.find(needle) != std::string::npos);
  };
  SUBCASE("a '..' component") {
    refuse(with_external("../outside.bin", 0, dir.path / "outside.bin"),
           "leaves the model's directory ('..')");
  }
  SUBCASE("an absolute path") {
    refuse(with_external((dir.path / "outside.bin").string(), 0, dir.path / "outside.bin"),
           "is an absolute path");
  }
  SUBCASE("a symlink leaving the directory") {
    with_external("", 0, dir.path / "outside.bin");
    fs::create_symlink(dir.path / "outside.bin", dir.path / "m" / "link.bin");
    refuse(with_external("link.bin", 0, ""), "outside the model's directory");
  }
  SUBCASE("offset and length beyond the file") {
    with_external("", 0, dir.path / "m" / "short.bin");  // 40 bytes
    refuse(with_external("short.bin", 8, ""), "lies outside 'short.bin'");
  }
  SUBCASE("a NUL byte in the location") {
    // Before: refused as "is an absolute path", with the NUL byte and what followed it printed raw.
    refuse(with_external(std::string("fc.bin\0/../../outside.bin", 25), 0, ""),
           "external data location holds a NUL byte at position 6");
  }
  SUBCASE("the model's directory itself") {
    // Before: "resolves to '<the directory>', outside the model's directory (a symlink leaving it)".
    refuse(with_external(".", 0, ""),
           "external data location '.' is the model's directory, not a file in it");
  }
  SUBCASE("a missing file") {
    refuse(with_external("absent.bin", 0, ""), "does not exist next to the model");
  }
}
