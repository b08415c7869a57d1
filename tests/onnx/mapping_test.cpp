// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Importer mappings on small hand-built graphs with odd shapes and a dynamic batch: what each imports to (the
// IR ops left after folding and patterns) and what it computes on ref and cpu at batch 1 and 3, against the
// formula evaluated in double precision.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "loader/mapped_file.h"
#include "onnx/importer.h"
#include "onnx_build.h"
#include "onnx_test_util.h"

using namespace vitrt;
using test::add_node;
using test::set_int;
using test::set_ints;

namespace {

Graph import_model(const onnx::ModelProto& m) {
  Graph g;
  std::string log;
  Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &g, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return g;
}

// A session on the imported graph as it is (non-image inputs never go through the model file's loader).
std::shared_ptr<const Model> as_model(Graph g) {
  auto m = std::make_shared<Model>();
  m->graph = std::move(g);
  static const uint8_t kNoFile = 0;
  m->file = MappedFile::borrow(&kNoFile, 0);
  return m;
}

std::map<std::string, int> ops_of(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes) ++ops[op_type_name(n.type)];
  return ops;
}

// Runs the model at batch 1 and 3 on ref and cpu; `expect(x, per_image_in, out_index_in_image)` gives each
// output element of one image from that image's input.
void check_values(const Graph& g, int64_t in_per_image, int64_t out_per_image,
                  const std::function<double(const float* x, int64_t i)>& expect) {
  auto model = as_model(g);
  for (const std::string backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    auto s = test::make_session(model, backend, 3);
    for (int64_t batch : {1, 3}) {
      CAPTURE(batch);
      std::vector<float> x(static_cast<size_t>(in_per_image * batch));
      for (size_t i = 0; i < x.size(); ++i) x[i] = 1.7f * std::sin(0.61f * static_cast<float>(i) + 0.3f);
      REQUIRE(s->output_shape(batch).numel() == out_per_image * batch);
      std::vector<float> y(static_cast<size_t>(out_per_image * batch), NAN);
      Status st = s->run(x.data(), batch, y.data(), y.size());
      REQUIRE_MESSAGE(st.ok(), st.message());
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < out_per_image; ++i) {
          const double want = expect(x.data() + b * in_per_image, i);
          CHECK(std::fabs(y[b * out_per_image + i] - want) <= 1e-5 * (1 + std::fabs(want)));
        }
    }
  }
}

onnx::NodeProto* constant(onnx::GraphProto* g, const std::string& name, const onnx::TensorProto& t) {
  auto* n = add_node(g, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
  return n;
}

onnx::TensorProto scalar(float v) {
  return test::float_tensor("", {}, {v});
}

}  // namespace

TEST_CASE("GELU in its tanh form becomes one Gelu(tanh)") {
  onnx::ModelProto m = test::model_with_input({5}, 14);
  auto* g = m.mutable_graph();
  constant(g, "k", scalar(0.044715f));
  constant(g, "c", scalar(0.7978845834732056f));
  constant(g, "one", scalar(1.0f));
  constant(g, "half", scalar(0.5f));
  add_node(g, "Mul", {"x", "x"}, {"x2"});
  add_node(g, "Mul", {"x", "x2"}, {"x3"});
  add_node(g, "Mul", {"k", "x3"}, {"kx3"});
  add_node(g, "Add", {"x", "kx3"}, {"inner"});
  add_node(g, "Mul", {"c", "inner"}, {"scaled"});
  add_node(g, "Tanh", {"scaled"}, {"t"});
  add_node(g, "Add", {"one", "t"}, {"t1"});
  add_node(g, "Mul", {"x", "t1"}, {"xt"});
  add_node(g, "Mul", {"half", "xt"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Gelu", 1}});
  REQUIRE(std::get<GeluAttrs>(ir.nodes[0].attrs).approximation == GeluApproximation::kTanh);
  check_values(ir, 5, 5, [](const float* x, int64_t i) {
    const double v = x[i];
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  });
}

TEST_CASE("shape machinery on the batch folds into Reshapes") {
  // x [B,2,3] -> Reshape(x, Concat(Unsqueeze(Shape(x)[0]), [6])) [B,6] -> Unsqueeze 1 [B,1,6] -> Squeeze 1
  // [B,6] -> Neg
  onnx::ModelProto m = test::model_with_input({2, 3}, 13);
  auto* g = m.mutable_graph();
  add_node(g, "Shape", {"x"}, {"s"});
  constant(g, "zero", test::int_tensor("", {}, {0}));
  constant(g, "axes0", test::int_tensor("", {1}, {0}));
  constant(g, "six", test::int_tensor("", {1}, {6}));
  set_int(add_node(g, "Gather", {"s", "zero"}, {"b"}), "axis", 0);
  add_node(g, "Unsqueeze", {"b", "axes0"}, {"b1"});
  set_int(add_node(g, "Concat", {"b1", "six"}, {"target"}), "axis", 0);
  add_node(g, "Reshape", {"x", "target"}, {"flat"});
  constant(g, "axes1", test::int_tensor("", {1}, {1}));
  add_node(g, "Unsqueeze", {"flat", "axes1"}, {"u"});
  add_node(g, "Squeeze", {"u", "axes1"}, {"sq"});
  add_node(g, "Neg", {"sq"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Mul", 1}, {"Reshape", 3}});
  check_values(ir, 6, 6, [](const float* x, int64_t i) { return -double(x[i]); });
}

TEST_CASE("Split, Concat, Gather and Slice on static axes") {
  // x [B,3,5]: Split axis 2 into [2,3] -> Concat(b, a) -> Gather index -1 on axis 1 [B,5] -> Slice [-4, 100)
  // on axis 1 [B,4]
  onnx::ModelProto m = test::model_with_input({3, 5}, 13);
  auto* g = m.mutable_graph();
  constant(g, "sizes", test::int_tensor("", {2}, {2, 3}));
  set_int(add_node(g, "Split", {"x", "sizes"}, {"a", "b"}), "axis", 2);
  set_int(add_node(g, "Concat", {"b", "a"}, {"ba"}), "axis", -1);
  constant(g, "last", test::int_tensor("", {}, {-1}));
  set_int(add_node(g, "Gather", {"ba", "last"}, {"row"}), "axis", 1);
  constant(g, "starts", test::int_tensor("", {1}, {-4}));
  constant(g, "ends", test::int_tensor("", {1}, {100}));
  constant(g, "axes", test::int_tensor("", {1}, {1}));
  add_node(g, "Slice", {"row", "starts", "ends", "axes"}, {"y"});
  const Graph ir = import_model(m);
  check_values(ir, 15, 4, [](const float* x, int64_t i) {
    // ba[r] = x[r][2..4] ++ x[r][0..1]; row = ba[2]; y = row[1..4]
    const int64_t col = i + 1;
    return double(x[2 * 5 + (col < 3 ? col + 2 : col - 3)]);
  });
}

TEST_CASE("Pow 2, ReduceMean, Div by a power of two, Reciprocal") {
  // y = 1 / (mean(x², axis -1, keepdims) / 4 + 1)  on x [B,2,7] -> [B,2,1]
  onnx::ModelProto m = test::model_with_input({2, 7}, 13);
  auto* g = m.mutable_graph();
  constant(g, "two", scalar(2.0f));
  constant(g, "four", scalar(4.0f));
  constant(g, "one", scalar(1.0f));
  add_node(g, "Pow", {"x", "two"}, {"sq"});
  set_ints(add_node(g, "ReduceMean", {"sq"}, {"ms"}), "axes", {-1});
  add_node(g, "Div", {"ms", "four"}, {"q"});
  add_node(g, "Add", {"q", "one"}, {"p"});
  add_node(g, "Reciprocal", {"p"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Add", 1}, {"Div", 1}, {"Mul", 2}, {"ReduceMean", 1}});
  check_values(ir, 14, 2, [](const float* x, int64_t i) {
    double s = 0;
    for (int k = 0; k < 7; ++k) s += double(x[i * 7 + k]) * x[i * 7 + k];
    return 1.0 / (s / 7 / 4 + 1);
  });
}

// A class token `tok` [1,1,4] expanded to "toks" [B,1,4] with the batch read from Shape(x), as exports write
// it.
static void add_class_token_expand(onnx::GraphProto* g) {
  *g->add_initializer() = test::pattern_tensor("tok", {1, 1, 4}, 0.5f);
  add_node(g, "Shape", {"x"}, {"s"});
  constant(g, "idx", test::int_tensor("", {1}, {0}));
  set_int(add_node(g, "Gather", {"s", "idx"}, {"b"}), "axis", 0);
  constant(g, "rest", test::int_tensor("", {2}, {1, 1}));
  set_int(add_node(g, "Concat", {"b", "rest"}, {"shape"}), "axis", 0);
  add_node(g, "Expand", {"tok", "shape"}, {"toks"});
}

TEST_CASE("an Expand to the batch read by a Concat (a class token)") {
  // tok [1,1,4] expanded to [B,1,4] (the shape from Shape(x)) and concatenated before x [B,2,4]; Gemm-free
  // MatMul with a bias Add after it becomes one Linear.
  onnx::ModelProto m = test::model_with_input({2, 4}, 17);
  auto* g = m.mutable_graph();
  *g->add_initializer() = test::pattern_tensor("w", {4, 3}, -0.04f);
  *g->add_initializer() = test::pattern_tensor("bias", {3}, 0.25f);
  add_class_token_expand(g);
  set_int(add_node(g, "Concat", {"toks", "x"}, {"seq"}), "axis", 1);
  add_node(g, "MatMul", {"seq", "w"}, {"mm"});
  add_node(g, "Add", {"mm", "bias"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Concat", 1}, {"Linear", 1}});
  const auto tok = test::pattern_tensor("", {1, 1, 4}, 0.5f), w = test::pattern_tensor("", {4, 3}, -0.04f),
             bias = test::pattern_tensor("", {3}, 0.25f);
  check_values(ir, 8, 9, [&](const float* x, int64_t i) {
    const int64_t row = i / 3, col = i % 3;
    double s = bias.float_data(static_cast<int>(col));
    for (int k = 0; k < 4; ++k) {
      const double v = row == 0 ? tok.float_data(k) : x[(row - 1) * 4 + k];
      s += v * w.float_data(k * 3 + static_cast<int>(col));
    }
    return s;
  });
}

TEST_CASE(
    "an Expand to the batch read by anything but Concat is refused, never folded with the wrong shape") {
  for (const char* reader : {"Relu", "Neg"}) {
    CAPTURE(reader);
    onnx::ModelProto m = test::model_with_input({2, 4}, 17);
    auto* g = m.mutable_graph();
    add_class_token_expand(g);
    add_node(g, reader, {"toks"}, {"y"});
    Graph ir;
    std::string log;
    const Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &ir, &log);
    CHECK(st.code() == StatusCode::kUnsupported);
    CHECK(st.message().find("Expand") != std::string::npos);
  }
}
