// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Importer mappings on small hand-built graphs with odd shapes and a dynamic batch: what each imports to (the
// IR ops left after folding and patterns) and what it computes on ref and cpu at batch 1 and 3, against the
// formula evaluated in double precision.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

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

TEST_CASE("GELU in its tanh form with the 0.5 applied first (SOFT's Approx_GeLU) becomes one Gelu(tanh)") {
  onnx::ModelProto m = test::model_with_input({5}, 17);
  auto* g = m.mutable_graph();
  constant(g, "half", scalar(0.5f));
  constant(g, "three", scalar(3.0f));
  constant(g, "k", scalar(0.044715f));
  constant(g, "c", scalar(0.7978845834732056f));
  constant(g, "one", scalar(1.0f));
  add_node(g, "Mul", {"x", "half"}, {"hx"});
  add_node(g, "Pow", {"x", "three"}, {"x3"});
  add_node(g, "Mul", {"x3", "k"}, {"kx3"});
  add_node(g, "Add", {"x", "kx3"}, {"inner"});
  add_node(g, "Mul", {"inner", "c"}, {"scaled"});
  add_node(g, "Tanh", {"scaled"}, {"t"});
  add_node(g, "Add", {"t", "one"}, {"t1"});
  add_node(g, "Mul", {"hx", "t1"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Gelu", 1}});
  REQUIRE(std::get<GeluAttrs>(ir.nodes[0].attrs).approximation == GeluApproximation::kTanh);
  check_values(ir, 5, 5, [](const float* x, int64_t i) {
    const double v = x[i];
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  });
}

// x [B,4,3] and l = x·w [B,4,3]: out[b,i,j] = Σ_c (x[b,i,c] − l[b,j,c])², written as torch.onnx.export
// unrolls SOFT's per-channel loop (tools/reference/vitrt_reference/soft.py gaussian_sq_dist), channels summed
// in `order`.
onnx::ModelProto unrolled_distance_model(const std::vector<int64_t>& order) {
  onnx::ModelProto m = test::model_with_input({4, 3}, 17);
  auto* g = m.mutable_graph();
  *g->add_initializer() = test::float_tensor("w", {3}, {0.5f, -1.25f, 2.0f});
  *g->add_initializer() = test::int_tensor("axis1", {1}, {1});
  *g->add_initializer() = test::int_tensor("axis2", {1}, {2});
  add_node(g, "Mul", {"x", "w"}, {"l"});
  add_node(g, "Unsqueeze", {"l", "axis1"}, {"l4"});  // [B,1,4,3]
  std::string acc;
  for (int64_t c : order) {
    const std::string k = std::to_string(c);
    *g->add_initializer() = test::int_tensor("c" + k, {}, {c});
    set_int(add_node(g, "Gather", {"x", "c" + k}, {"xc" + k}), "axis", 2);   // [B,4]
    add_node(g, "Unsqueeze", {"xc" + k, "axis2"}, {"xu" + k});               // [B,4,1]
    set_int(add_node(g, "Gather", {"l4", "c" + k}, {"lc" + k}), "axis", 3);  // [B,1,4]
    add_node(g, "Sub", {"xu" + k, "lc" + k}, {"d" + k});
    add_node(g, "Mul", {"d" + k, "d" + k}, {"t" + k});
    const std::string sum = c == order.back() ? "y" : "s" + k;
    if (!acc.empty()) add_node(g, "Add", {acc, "t" + k}, {sum});
    acc = acc.empty() ? "t" + k : sum;
  }
  return m;
}

double unrolled_distance(const float* x, int64_t e) {
  const double w[3] = {0.5, -1.25, 2.0};
  const int64_t i = e / 4, j = e % 4;
  double s = 0;
  for (int c = 0; c < 3; ++c) {
    const double d = x[i * 3 + c] - static_cast<double>(x[j * 3 + c] * static_cast<float>(w[c]));
    s += d * d;
  }
  return s;
}

TEST_CASE("a squared distance summed channel by channel becomes one broadcast ReduceSum") {
  const Graph ir = import_model(unrolled_distance_model({0, 1, 2}));
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Mul", 2}, {"Reshape", 2}, {"ReduceSum", 1}, {"Sub", 1}});
  check_values(ir, 12, 16, unrolled_distance);
}

TEST_CASE("a squared distance summed out of channel order is left as written") {
  // (t0 + t2) + t1 rounds differently from the in-order sum the broadcast form stands for: not rewritten.
  const Graph ir = import_model(unrolled_distance_model({0, 2, 1}));
  CHECK(ops_of(ir).count("ReduceSum") == 0);
  CHECK(ops_of(ir).at("Add") == 2);
  check_values(ir, 12, 16, unrolled_distance);
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

namespace {

void set_float(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

Status try_import(const onnx::ModelProto& m) {
  Graph g;
  std::string log;
  return convert::import_onnx(m, convert::OnnxImportOptions{}, &g, &log);
}

}  // namespace

TEST_CASE("one-input functions become one Unary with ONNX's parameters (defaults and given)") {
  struct Case {
    const char* op;
    float alpha, beta;  // NAN: the attribute is not given
    UnaryKind kind;
    float want_alpha, want_beta;
    std::function<double(double)> f;
  };
  const auto clamp01 = [](double v) { return std::min(std::max(v, 0.0), 1.0); };
  const Case cases[] = {
      {"Sqrt", NAN, NAN, UnaryKind::kSqrt, 0, 0, [](double x) { return std::sqrt(x); }},
      {"Erf", NAN, NAN, UnaryKind::kErf, 0, 0, [](double x) { return std::erf(x); }},
      {"Tanh", NAN, NAN, UnaryKind::kTanh, 0, 0, [](double x) { return std::tanh(x); }},
      {"Sigmoid", NAN, NAN, UnaryKind::kSigmoid, 0, 0, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"Abs", NAN, NAN, UnaryKind::kAbs, 0, 0, [](double x) { return std::fabs(x); }},
      {"Log", NAN, NAN, UnaryKind::kLog, 0, 0, [](double x) { return std::log(x); }},
      {"Floor", NAN, NAN, UnaryKind::kFloor, 0, 0, [](double x) { return std::floor(x); }},
      {"Ceil", NAN, NAN, UnaryKind::kCeil, 0, 0, [](double x) { return std::ceil(x); }},
      {"LeakyRelu", NAN, NAN, UnaryKind::kLeakyRelu, 0.01f, 0, [](double x) { return x < 0 ? 0.01 * x : x; }},
      {"LeakyRelu", 0.3f, NAN, UnaryKind::kLeakyRelu, 0.3f, 0, [](double x) { return x < 0 ? 0.3 * x : x; }},
      {"Elu", NAN, NAN, UnaryKind::kElu, 1.0f, 0, [](double x) { return x < 0 ? std::exp(x) - 1 : x; }},
      {"Elu", 0.5f, NAN, UnaryKind::kElu, 0.5f, 0,
       [](double x) { return x < 0 ? 0.5 * (std::exp(x) - 1) : x; }},
      {"HardSigmoid", NAN, NAN, UnaryKind::kHardSigmoid, 0.2f, 0.5f,
       [&](double x) { return clamp01(0.2 * x + 0.5); }},
      {"HardSigmoid", 0.25f, 0.375f, UnaryKind::kHardSigmoid, 0.25f, 0.375f,
       [&](double x) { return clamp01(0.25 * x + 0.375); }},
      {"HardSwish", NAN, NAN, UnaryKind::kHardSwish, 0, 0,
       [&](double x) { return x * clamp01(x / 6 + 0.5); }},
      {"Softplus", NAN, NAN, UnaryKind::kSoftplus, 0, 0, [](double x) { return std::log(1 + std::exp(x)); }},
      {"Sin", NAN, NAN, UnaryKind::kSin, 0, 0, [](double x) { return std::sin(x); }},
      {"Cos", NAN, NAN, UnaryKind::kCos, 0, 0, [](double x) { return std::cos(x); }},
      {"Round", NAN, NAN, UnaryKind::kRound, 0, 0,
       [](double x) { return std::nearbyint(x); }},  // ties to even
      {"Sign", NAN, NAN, UnaryKind::kSign, 0, 0, [](double x) { return x > 0   ? 1.0
                                                                       : x < 0 ? -1.0
                                                                               : 0.0; }},
      {"Mish", NAN, NAN, UnaryKind::kMish, 0, 0,
       [](double x) { return x * std::tanh(std::log(1 + std::exp(x))); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.op);
    CAPTURE(c.alpha);
    onnx::ModelProto m = test::model_with_input({3, 5}, c.kind == UnaryKind::kMish ? 18 : 17);  // Mish: 18
    auto* g = m.mutable_graph();
    // x arrives as 1.7·sin(...) (check_values): spread it over [-5, 5] first, or make it positive for the
    // functions of positive numbers.
    const bool positive = c.kind == UnaryKind::kSqrt || c.kind == UnaryKind::kLog;
    constant(g, "three", scalar(3.0f));
    if (positive)
      add_node(g, "Exp", {"x"}, {"x3"});
    else
      add_node(g, "Mul", {"x", "three"}, {"x3"});
    auto* n = add_node(g, c.op, {"x3"}, {"y"});
    if (!std::isnan(c.alpha)) set_float(n, "alpha", c.alpha);
    if (!std::isnan(c.beta)) set_float(n, "beta", c.beta);
    const Graph ir = import_model(m);
    REQUIRE(ops_of(ir) == std::map<std::string, int>{{positive ? "Exp" : "Mul", 1}, {"Unary", 1}});
    const UnaryAttrs& a = std::get<UnaryAttrs>(ir.nodes[1].attrs);
    CHECK(a.kind == c.kind);
    CHECK(a.alpha == c.want_alpha);
    CHECK(a.beta == c.want_beta);
    check_values(ir, 15, 15, [&](const float* x, int64_t i) {
      return c.f(positive ? std::exp(double(x[i])) : static_cast<double>(x[i] * 3.0f));
    });
  }
}

// The functions appended later (UnaryKind 22-35), their attributes under ONNX's own names (Selu's gamma,
// Shrink's lambd and bias), defaults and given values.
TEST_CASE("Selu, Celu, ThresholdedRelu, Softsign, Shrink and the trigonometric ops become one Unary") {
  struct Case {
    const char* op;
    std::vector<std::pair<const char*, float>> attrs;
    UnaryKind kind;
    float want_alpha, want_beta;
    std::function<double(double)> f;
    bool unit_range = false;  // the input squeezed into (-1, 1) (Asin, Acos, Atanh) or moved to > 1 (Acosh)
  };
  const double selu_a = 1.67326319217681884765625, selu_g = 1.05070102214813232421875;
  const Case cases[] = {
      {"Selu",
       {},
       UnaryKind::kSelu,
       float(selu_a),
       float(selu_g),
       [&](double x) { return x > 0 ? selu_g * x : selu_g * selu_a * std::expm1(x); }},
      {"Selu",
       {{"alpha", 2.0f}, {"gamma", 0.5f}},
       UnaryKind::kSelu,
       2.0f,
       0.5f,
       [](double x) { return x > 0 ? 0.5 * x : std::expm1(x); }},
      {"Celu", {}, UnaryKind::kCelu, 1.0f, 0.0f, [](double x) { return x > 0 ? x : std::expm1(x); }},
      {"Celu",
       {{"alpha", 0.5f}},
       UnaryKind::kCelu,
       0.5f,
       0.0f,
       [](double x) { return x > 0 ? x : 0.5 * std::expm1(x / 0.5); }},
      {"ThresholdedRelu",
       {},
       UnaryKind::kThresholdedRelu,
       1.0f,
       0.0f,
       [](double x) { return x > 1 ? x : 0.0; }},
      {"ThresholdedRelu",
       {{"alpha", -0.5f}},
       UnaryKind::kThresholdedRelu,
       -0.5f,
       0.0f,
       [](double x) { return x > -0.5 ? x : 0.0; }},
      {"Softsign", {}, UnaryKind::kSoftsign, 0, 0, [](double x) { return x / (1 + std::fabs(x)); }},
      {"Shrink",
       {},
       UnaryKind::kShrink,
       0.5f,
       0.0f,
       [](double x) { return x < -0.5  ? x
                             : x > 0.5 ? x
                                       : 0.0; }},
      {"Shrink",
       {{"lambd", 1.5f}, {"bias", 1.5f}},
       UnaryKind::kShrink,
       1.5f,
       1.5f,
       [](double x) { return x < -1.5  ? x + 1.5
                             : x > 1.5 ? x - 1.5
                                       : 0.0; }},
      {"Tan", {}, UnaryKind::kTan, 0, 0, [](double x) { return std::tan(x); }},
      {"Atan", {}, UnaryKind::kAtan, 0, 0, [](double x) { return std::atan(x); }},
      {"Sinh", {}, UnaryKind::kSinh, 0, 0, [](double x) { return std::sinh(x); }},
      {"Cosh", {}, UnaryKind::kCosh, 0, 0, [](double x) { return std::cosh(x); }},
      {"Asinh", {}, UnaryKind::kAsinh, 0, 0, [](double x) { return std::asinh(x); }},
      {"Asin", {}, UnaryKind::kAsin, 0, 0, [](double x) { return std::asin(x); }, true},
      {"Acos", {}, UnaryKind::kAcos, 0, 0, [](double x) { return std::acos(x); }, true},
      {"Atanh", {}, UnaryKind::kAtanh, 0, 0, [](double x) { return std::atanh(x); }, true},
      {"Acosh", {}, UnaryKind::kAcosh, 0, 0, [](double x) { return std::acosh(x); }, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.op);
    CAPTURE(c.attrs.size());
    onnx::ModelProto m = test::model_with_input({3, 5}, 17);
    auto* g = m.mutable_graph();
    // x arrives as 1.7·sin(...) (check_values): spread over [-5, 5], or to (-0.85, 0.85) and (1, 2.7) for the
    // functions of a bounded range.
    const bool acosh = c.kind == UnaryKind::kAcosh;
    constant(g, "k", scalar(c.unit_range ? 0.5f : 3.0f));
    constant(g, "two", scalar(2.0f));
    add_node(g, "Mul", {"x", "k"}, {acosh ? "xk" : "x3"});
    if (acosh) add_node(g, "Add", {"xk", "two"}, {"x3"});
    auto* n = add_node(g, c.op, {"x3"}, {"y"});
    for (const auto& [name, v] : c.attrs) set_float(n, name, v);
    const Graph ir = import_model(m);
    std::map<std::string, int> want_ops{{"Mul", 1}, {"Unary", 1}};
    if (acosh) want_ops["Add"] = 1;
    REQUIRE(ops_of(ir) == want_ops);
    const UnaryAttrs& a = std::get<UnaryAttrs>(ir.nodes.back().attrs);
    CHECK(a.kind == c.kind);
    CHECK(a.alpha == c.want_alpha);
    CHECK(a.beta == c.want_beta);
    const float k = c.unit_range ? 0.5f : 3.0f;
    check_values(ir, 15, 15, [&](const float* x, int64_t i) {
      const float xk = x[i] * k;
      return c.f(acosh ? static_cast<double>(xk + 2.0f) : static_cast<double>(xk));
    });
  }
  // Attributes that are not finite, and Celu's alpha of 0 (it divides x), are malformed nodes.
  const std::pair<const char*, std::pair<const char*, float>> bad[] = {
      {"Selu", {"gamma", INFINITY}},
      {"Shrink", {"lambd", NAN}},
      {"Celu", {"alpha", 0.0f}},
      {"ThresholdedRelu", {"alpha", -INFINITY}}};
  for (const auto& [op, attr] : bad) {
    CAPTURE(op);
    onnx::ModelProto m = test::model_with_input({3, 5}, 17);
    set_float(add_node(m.mutable_graph(), op, {"x"}, {"y"}), attr.first, attr.second);
    const Status st = try_import(m);
    CHECK(st.code() == StatusCode::kBadInput);
    CHECK_MESSAGE(st.message().find(op) != std::string::npos, st.message());
  }
}

// PRelu as torch.nn.PReLU exports it (a slope per channel, [C,1,1], or one [1]) becomes the IR's PRelu; a
// slope that does not broadcast to the input alone is a malformed node.
TEST_CASE("PRelu: a per-channel or single slope becomes one PRelu; a slope wider than x is refused") {
  for (const bool per_channel : {true, false}) {
    CAPTURE(per_channel);
    onnx::ModelProto m = test::model_with_input({3, 2, 5}, 17);
    auto* g = m.mutable_graph();
    const std::vector<float> slopes =
        per_channel ? std::vector<float>{0.25f, -0.5f, 2.0f} : std::vector<float>{0.125f};
    const std::vector<int64_t> dims = per_channel ? std::vector<int64_t>{3, 1, 1} : std::vector<int64_t>{1};
    constant(g, "slope", test::float_tensor("", dims, slopes));
    add_node(g, "PRelu", {"x", "slope"}, {"y"});
    const Graph ir = import_model(m);
    REQUIRE(ops_of(ir) == std::map<std::string, int>{{"PRelu", 1}});
    check_values(ir, 30, 30, [&](const float* x, int64_t i) {
      const double s = slopes[per_channel ? static_cast<size_t>(i / 10) : 0];
      return x[i] < 0 ? x[i] * s : x[i];
    });
  }
  onnx::ModelProto m = test::model_with_input({3, 5}, 17);
  auto* g = m.mutable_graph();
  constant(g, "slope", test::float_tensor("", {2, 3, 5}, std::vector<float>(30, 0.5f)));
  add_node(g, "PRelu", {"x", "slope"}, {"y"});
  const Status st = try_import(m);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(
      st.message().find("slope [2,3,5] does not broadcast to the input's shape [B,3,5]") != std::string::npos,
      st.message());
}

// LRN (the ONNX model zoo's Caffe classifiers) becomes the IR's Lrn with ONNX's defaults for alpha, beta and
// bias; its window across channels computed as ONNX defines it; size missing or below 1, or an input below
// rank 3, is a malformed node.
TEST_CASE("LRN becomes one Lrn with ONNX's defaults; a missing size or a rank-2 input is refused") {
  for (const bool defaults : {true, false}) {
    CAPTURE(defaults);
    onnx::ModelProto m = test::model_with_input({6, 2, 2}, 13);
    auto* n = add_node(m.mutable_graph(), "LRN", {"x"}, {"y"});
    set_int(n, "size", defaults ? 5 : 2);
    if (!defaults) {
      set_float(n, "alpha", 0.5f);
      set_float(n, "beta", 0.25f);
      set_float(n, "bias", 3.0f);
    }
    const Graph ir = import_model(m);
    REQUIRE(ops_of(ir) == std::map<std::string, int>{{"Lrn", 1}});
    const LrnAttrs& a = std::get<LrnAttrs>(ir.nodes[0].attrs);
    const LrnAttrs want = defaults ? LrnAttrs{5, 1e-4f, 0.75f, 1.0f} : LrnAttrs{2, 0.5f, 0.25f, 3.0f};
    CHECK(a.size == want.size);
    CHECK(a.alpha == want.alpha);
    CHECK(a.beta == want.beta);
    CHECK(a.bias == want.bias);
    const int64_t before = (want.size - 1) / 2, after = want.size / 2;
    check_values(ir, 24, 24, [&](const float* x, int64_t i) {
      const int64_t c = i / 4, p = i % 4;
      double sum = 0;
      for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min<int64_t>(5, c + after); ++k)
        sum += double(x[k * 4 + p]) * x[k * 4 + p];
      return x[i] / std::pow(double(want.bias) + double(want.alpha) / want.size * sum, double(want.beta));
    });
  }
  struct Bad {
    std::vector<int64_t> dims;
    int64_t size;  // 0: not given
    const char* needle;
  };
  for (const Bad& b : {Bad{{6, 2, 2}, 0, "has no 'size' attribute"}, Bad{{6, 2, 2}, -3, "size -3"},
                       Bad{{6}, 3, "input of rank 2, expected [N,C,D1,...]"}}) {
    CAPTURE(b.needle);
    onnx::ModelProto m = test::model_with_input(b.dims, 13);
    auto* n = add_node(m.mutable_graph(), "LRN", {"x"}, {"y"});
    if (b.size) set_int(n, "size", b.size);
    const Status st = try_import(m);
    CHECK(st.code() == StatusCode::kBadInput);
    CHECK_MESSAGE(st.message().find(b.needle) != std::string::npos, st.message());
  }
}

// GroupNormalization: opset 18's scale and bias per group, opset 21's per channel (torch.nn.GroupNorm's),
// lowered to Reshape, InstanceNorm, Reshape (and Mul, Add at 21); against ONNX's definition in double.
TEST_CASE(
    "GroupNormalization (opsets 18 and 21) becomes Reshape, InstanceNorm, Reshape; refusals name the node") {
  struct Case {
    int64_t opset, groups;
  };
  for (const Case c : {Case{18, 3}, Case{21, 3}, Case{21, 1}, Case{21, 6}, Case{18, 2}}) {
    CAPTURE(c.opset);
    CAPTURE(c.groups);
    const bool per_channel = c.opset >= 21;
    const int64_t n_params = per_channel ? 6 : c.groups;
    std::vector<float> scale, bias;
    for (int64_t i = 0; i < n_params; ++i) {
      scale.push_back(0.5f + 0.25f * static_cast<float>(i));
      bias.push_back(0.125f * static_cast<float>(i) - 0.3f);
    }
    onnx::ModelProto m = test::model_with_input({6, 2, 3}, c.opset);
    auto* g = m.mutable_graph();
    constant(g, "scale", test::float_tensor("", {n_params}, scale));
    constant(g, "bias", test::float_tensor("", {n_params}, bias));
    auto* n = add_node(g, "GroupNormalization", {"x", "scale", "bias"}, {"y"});
    set_int(n, "num_groups", c.groups);
    set_float(n, "epsilon", 1e-3f);
    const Graph ir = import_model(m);
    std::map<std::string, int> want{{"Reshape", 2}, {"InstanceNorm", 1}};
    if (per_channel) want.insert({{"Mul", 1}, {"Add", 1}});
    CHECK(ops_of(ir) == want);
    const int64_t per_group = 36 / c.groups;
    check_values(ir, 36, 36, [&](const float* x, int64_t i) {
      const int64_t grp = i / per_group, ch = i / 6;
      double mean = 0, var = 0;
      for (int64_t k = grp * per_group; k < (grp + 1) * per_group; ++k) mean += x[k];
      mean /= double(per_group);
      for (int64_t k = grp * per_group; k < (grp + 1) * per_group; ++k) var += (x[k] - mean) * (x[k] - mean);
      var /= double(per_group);
      const int64_t p = per_channel ? ch : grp;
      return (x[i] - mean) / std::sqrt(var + double(1e-3f)) * scale[p] + bias[p];
    });
  }
  struct Bad {
    int64_t opset, groups, n_params, stash;
    StatusCode code;
    const char* needle;
  };
  const Bad bad[] = {
      {21, 4, 6, 1, StatusCode::kBadInput, "num_groups 4 does not divide the 6 channels"},
      {21, 3, 3, 1, StatusCode::kBadInput, "scale must hold 6 float values"},
      {18, 3, 6, 1, StatusCode::kBadInput, "scale must hold 3 float values"},
      {17, 3, 3, 1, StatusCode::kBadInput, "GroupNormalization is an operator of opset 18 and later"},
      {21, 0, 6, 1, StatusCode::kBadInput, "has no 'num_groups' attribute"},
      {21, 3, 6, 11, StatusCode::kUnsupported, "stash_type 11"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.needle);
    onnx::ModelProto m = test::model_with_input({6, 2, 3}, b.opset);
    auto* g = m.mutable_graph();
    constant(g, "scale", test::float_tensor("", {b.n_params}, std::vector<float>(b.n_params, 1.0f)));
    constant(g, "bias", test::float_tensor("", {b.n_params}, std::vector<float>(b.n_params, 0.0f)));
    auto* n = add_node(g, "GroupNormalization", {"x", "scale", "bias"}, {"y"});
    if (b.groups) set_int(n, "num_groups", b.groups);
    if (b.stash != 1) set_int(n, "stash_type", b.stash);
    const Status st = try_import(m);
    CHECK(st.code() == b.code);
    CHECK_MESSAGE(st.message().find(b.needle) != std::string::npos, st.message());
  }
}

// RMSNormalization (opset 23) over the last axis and over the last two, ONNX's reference steps; Swish (24) as
// Silu for alpha 1, Mul / Sigmoid / Mul otherwise.
TEST_CASE("RMSNormalization and Swish lower to IR ops with ONNX's arithmetic") {
  for (const int64_t axis : {-1, 1}) {
    CAPTURE(axis);
    onnx::ModelProto m = test::model_with_input({4, 6}, 23);
    auto* g = m.mutable_graph();
    std::vector<float> scale;
    const int64_t n_scale = axis == -1 ? 6 : 24;
    for (int64_t i = 0; i < n_scale; ++i) scale.push_back(1.0f + 0.0625f * static_cast<float>(i % 7));
    constant(
        g, "scale",
        test::float_tensor("", axis == -1 ? std::vector<int64_t>{6} : std::vector<int64_t>{4, 6}, scale));
    auto* n = add_node(g, "RMSNormalization", {"x", "scale"}, {"y"});
    set_int(n, "axis", axis);
    const Graph ir = import_model(m);
    CHECK(ops_of(ir) ==
          std::map<std::string, int>{{"Mul", 2}, {"ReduceMean", 1}, {"Add", 1}, {"Unary", 1}, {"Div", 1}});
    const int64_t span = axis == -1 ? 6 : 24;
    check_values(ir, 24, 24, [&](const float* x, int64_t i) {
      const int64_t start = i / span * span;
      double ms = 0;
      for (int64_t k = start; k < start + span; ++k) ms += double(x[k]) * x[k];
      ms /= double(span);
      return x[i] / std::sqrt(ms + double(1e-5f)) * scale[i % n_scale];
    });
  }
  for (const float alpha : {1.0f, 0.5f}) {
    CAPTURE(alpha);
    onnx::ModelProto m = test::model_with_input({3, 5}, 24);
    auto* n = add_node(m.mutable_graph(), "Swish", {"x"}, {"y"});
    if (alpha != 1.0f) set_float(n, "alpha", alpha);
    const Graph ir = import_model(m);
    if (alpha == 1.0f) {
      REQUIRE(ops_of(ir) == std::map<std::string, int>{{"Unary", 1}});
      CHECK(std::get<UnaryAttrs>(ir.nodes[0].attrs).kind == UnaryKind::kSilu);
    } else {
      CHECK(ops_of(ir) == std::map<std::string, int>{{"Mul", 2}, {"Unary", 1}});
    }
    check_values(ir, 15, 15,
                 [&](const float* x, int64_t i) { return x[i] / (1 + std::exp(-alpha * double(x[i]))); });
  }
  // Refusals, naming the node.
  onnx::ModelProto m = test::model_with_input({4, 6}, 23);
  constant(m.mutable_graph(), "scale", test::float_tensor("", {6}, std::vector<float>(6, 1.0f)));
  auto* n = add_node(m.mutable_graph(), "RMSNormalization", {"x", "scale"}, {"y"});
  set_int(n, "axis", 0);
  Status st = try_import(m);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("normalises over the batch axis") != std::string::npos, st.message());
  n->clear_attribute();
  set_int(n, "axis", 1);  // scale [6] broadcasts to [4,6]; [5] would not
  *m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t() =
      test::float_tensor("", {5}, std::vector<float>(5, 1.0f));
  st = try_import(m);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(st.message().find("scale does not broadcast to the normalised axes") != std::string::npos,
                st.message());
  onnx::ModelProto sw = test::model_with_input({3, 5}, 24);
  set_float(add_node(sw.mutable_graph(), "Swish", {"x"}, {"y"}), "alpha", NAN);
  st = try_import(sw);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(st.message().find("(Swish, opset 24): alpha must be finite") != std::string::npos,
                st.message());
}

TEST_CASE("Clip: constant bounds (either may be absent) become one Unary; computed bounds are refused") {
  const float inf = INFINITY;
  struct Case {
    bool has_min, has_max;
    float lo, hi;
  };
  for (const Case& c :
       {Case{true, true, -0.5f, 0.75f}, Case{true, false, -0.5f, inf}, Case{false, true, -inf, 0.75f}}) {
    CAPTURE(c.has_min);
    CAPTURE(c.has_max);
    onnx::ModelProto m = test::model_with_input({7}, 13);
    auto* g = m.mutable_graph();
    constant(g, "lo", scalar(-0.5f));
    constant(g, "hi", scalar(0.75f));
    add_node(g, "Clip", {"x", c.has_min ? "lo" : "", c.has_max ? "hi" : ""}, {"y"});
    const Graph ir = import_model(m);
    REQUIRE(ops_of(ir) == std::map<std::string, int>{{"Unary", 1}});
    const UnaryAttrs& a = std::get<UnaryAttrs>(ir.nodes[0].attrs);
    CHECK(a.kind == UnaryKind::kClip);
    CHECK(a.alpha == c.lo);
    CHECK(a.beta == c.hi);
    check_values(ir, 7, 7, [&](const float* x, int64_t i) {
      return std::min(std::max(static_cast<double>(x[i]), double(c.lo)), double(c.hi));
    });
  }
  onnx::ModelProto m = test::model_with_input({7}, 13);
  auto* g = m.mutable_graph();
  add_node(g, "ReduceMax", {"x"}, {"top"});
  add_node(g, "Clip", {"x", "", "top"}, {"y"});
  const Status st = try_import(m);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(
      st.message().find("(Clip, opset 13): its max is computed, not a constant") != std::string::npos,
      st.message());
}

TEST_CASE("x·Sigmoid(x) becomes one Unary(Silu); a Sigmoid read elsewhere too stays Sigmoid and Mul") {
  onnx::ModelProto m = test::model_with_input({2, 5}, 13);
  auto* g = m.mutable_graph();
  add_node(g, "Sigmoid", {"x"}, {"s"});
  add_node(g, "Mul", {"s", "x"}, {"y"});
  const Graph ir = import_model(m);
  REQUIRE(ops_of(ir) == std::map<std::string, int>{{"Unary", 1}});
  CHECK(std::get<UnaryAttrs>(ir.nodes[0].attrs).kind == UnaryKind::kSilu);
  check_values(ir, 10, 10, [](const float* x, int64_t i) { return x[i] / (1 + std::exp(-double(x[i]))); });

  onnx::ModelProto m2 = test::model_with_input({2, 5}, 13);
  g = m2.mutable_graph();
  add_node(g, "Sigmoid", {"x"}, {"s"});
  add_node(g, "Mul", {"s", "x"}, {"p"});
  add_node(g, "Add", {"p", "s"}, {"y"});
  const Graph ir2 = import_model(m2);
  CHECK(ops_of(ir2) == std::map<std::string, int>{{"Add", 1}, {"Mul", 1}, {"Unary", 1}});
  check_values(ir2, 10, 10, [](const float* x, int64_t i) {
    const double s = 1 / (1 + std::exp(-double(x[i])));
    return x[i] * s + s;
  });
}

TEST_CASE("Pow with a general or integer exponent becomes Pow; Min and Max of three inputs a chain") {
  // y = max(min(|x|^1.5, 1.25, x + 1), x^int 3) on x [B,3,5]; the 1.25 broadcasts.
  onnx::ModelProto m = test::model_with_input({3, 5}, 13);
  auto* g = m.mutable_graph();
  constant(g, "e", scalar(1.5f));
  constant(g, "cap", scalar(1.25f));
  constant(g, "one", scalar(1.0f));
  constant(g, "three", test::int_tensor("", {}, {3}));
  add_node(g, "Abs", {"x"}, {"ax"});
  add_node(g, "Pow", {"ax", "e"}, {"p"});
  add_node(g, "Add", {"x", "one"}, {"x1"});
  add_node(g, "Min", {"p", "cap", "x1"}, {"lo"});
  add_node(g, "Pow", {"x", "three"}, {"cube"});
  add_node(g, "Max", {"lo", "cube"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) ==
        std::map<std::string, int>{{"Add", 1}, {"Max", 1}, {"Min", 2}, {"Pow", 2}, {"Unary", 1}});
  check_values(ir, 15, 15, [](const float* x, int64_t i) {
    const double v = x[i];
    return std::max(std::min({std::pow(std::fabs(v), 1.5), 1.25, v + 1}), v * v * v);
  });
}

TEST_CASE("Flatten counts a negative axis from the end (-1 keeps the last axis apart)") {
  // [B,12] axis -1 (= 1) and [B,3,4] axis -2 (= 1) both give [B,12] (read as axis + rank + 1 they gave
  // [12B,1] and [3B,4]).
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{12}, std::vector<int64_t>{3, 4}}) {
    CAPTURE(dims.size());
    onnx::ModelProto m = test::model_with_input(dims, 13);
    set_int(add_node(m.mutable_graph(), "Flatten", {"x"}, {"y"}), "axis", dims.size() == 1 ? -1 : -2);
    const Graph ir = import_model(m);
    auto s = test::make_session(as_model(ir), "ref", 2);
    CHECK(s->output_shape(2) == Shape{2, 12});
  }
}

TEST_CASE("EyeLike of a constant folds, with k (inside, negative, past the edge) and dtype") {
  // y = x + EyeLike(c, k=1) + EyeLike(c, k=-2, double) + EyeLike(c, k=7) on x [B,4,5], c a [4,5] constant.
  onnx::ModelProto m = test::model_with_input({4, 5}, 17);
  auto* g = m.mutable_graph();
  constant(g, "c", test::pattern_tensor("", {4, 5}, 0.5f));
  set_int(add_node(g, "EyeLike", {"c"}, {"e1"}), "k", 1);
  auto* e2 = add_node(g, "EyeLike", {"c"}, {"e2"});
  set_int(e2, "k", -2);
  set_int(e2, "dtype", onnx::TensorProto::DOUBLE);
  set_int(add_node(g, "EyeLike", {"c"}, {"e3"}), "k", 7);  // past the last column: all zeros
  add_node(g, "Add", {"x", "e1"}, {"a"});
  add_node(g, "Add", {"a", "e2"}, {"b"});
  add_node(g, "Add", {"b", "e3"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Add", 3}});
  check_values(ir, 20, 20, [](const float* x, int64_t i) {
    const int64_t r = i / 5, c = i % 5;
    return x[i] + (c - r == 1 ? 1.0 : 0.0) + (c - r == -2 ? 1.0 : 0.0);
  });
}

TEST_CASE("EyeLike of an activation or of a non-2-D constant is refused, naming the node") {
  {
    onnx::ModelProto m = test::model_with_input({3, 4}, 17);
    auto* g = m.mutable_graph();
    add_node(g, "EyeLike", {"x"}, {"e"});
    add_node(g, "Add", {"x", "e"}, {"y"});
    Graph ir;
    std::string log;
    const Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &ir, &log);
    REQUIRE(!st.ok());
    CHECK(st.message().find("EyeLike") != std::string::npos);
  }
  {
    onnx::ModelProto m = test::model_with_input({3, 4}, 17);
    auto* g = m.mutable_graph();
    constant(g, "c", test::pattern_tensor("", {2, 3, 4}, 0.5f));
    add_node(g, "EyeLike", {"c"}, {"e"});
    add_node(g, "Add", {"x", "e"}, {"y"});
    Graph ir;
    std::string log;
    const Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &ir, &log);
    REQUIRE(!st.ok());
    CHECK(st.message().find("EyeLike_e") != std::string::npos);
    CHECK(st.message().find("2-D") != std::string::npos);
  }
}

namespace {

// Max or average of one [h,w] plane over the window of output cell (i, j), in double; -inf / NaN when the
// window holds no input position. count_include_pad counts positions in [-pad_begin, in + pad_end).
double pool_cell(const float* plane, int64_t h, int64_t w, const Pool2dAttrs& a, int64_t i, int64_t j) {
  double best = -INFINITY, sum = 0;
  int64_t inside = 0, padded = 0;
  for (int64_t kr = 0; kr < a.kernel_h; ++kr)
    for (int64_t kc = 0; kc < a.kernel_w; ++kc) {
      const int64_t r = i * a.stride_h - a.pad_top + kr * a.dilation_h;
      const int64_t c = j * a.stride_w - a.pad_left + kc * a.dilation_w;
      if (r < h + a.pad_bottom && c < w + a.pad_right) ++padded;
      if (r < 0 || r >= h || c < 0 || c >= w) continue;
      best = std::max(best, double(plane[r * w + c]));
      sum += plane[r * w + c];
      ++inside;
    }
  if (a.kind == PoolKind::kMax) return best;
  return sum / double(a.count_include_pad ? padded : inside);
}

const Pool2dAttrs& only_pool(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.type == OpType::kPool2d) return std::get<Pool2dAttrs>(n.attrs);
  FAIL("no Pool2d in the imported graph");
  static const Pool2dAttrs none;
  return none;
}

}  // namespace

TEST_CASE("MaxPool with SAME_LOWER pads the start: asymmetric Pool2d padding") {
  // x [B,3,7,6], window 2x3, stride 2x1: ONNX's SAME gives outputs 4x6, padding 1 row at the top (the odd one
  // goes first for SAME_LOWER) and 1 column each side.
  onnx::ModelProto m = test::model_with_input({3, 7, 6}, 12);
  auto* n = add_node(m.mutable_graph(), "MaxPool", {"x"}, {"y"});
  auto* a = n->add_attribute();
  a->set_name("auto_pad");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("SAME_LOWER");
  set_ints(n, "kernel_shape", {2, 3});
  set_ints(n, "strides", {2, 1});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Pool2d", 1}});
  const Pool2dAttrs p = only_pool(ir);
  CHECK(p.kind == PoolKind::kMax);
  CHECK(p.pad_top == 1);
  CHECK(p.pad_bottom == 0);
  CHECK(p.pad_left == 1);
  CHECK(p.pad_right == 1);
  check_values(ir, 3 * 7 * 6, 3 * 4 * 6, [&](const float* x, int64_t i) {
    return pool_cell(x + i / 24 * 42, 7, 6, p, i % 24 / 6, i % 6);
  });
}

TEST_CASE("AveragePool over one axis: Reshape to a 1-high image, Pool2d, Reshape back") {
  // x [B,2,8], window 3, stride 2, pads 1/1, ceil_mode, count_include_pad: 5 outputs; the last window starts
  // at 7 and covers 7, the pad 8 and the ceil_mode overhang 9, so it divides by 2.
  onnx::ModelProto m = test::model_with_input({2, 8}, 11);
  auto* n = add_node(m.mutable_graph(), "AveragePool", {"x"}, {"y"});
  set_ints(n, "kernel_shape", {3});
  set_ints(n, "strides", {2});
  set_ints(n, "pads", {1, 1});
  set_int(n, "ceil_mode", 1);
  set_int(n, "count_include_pad", 1);
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Pool2d", 1}, {"Reshape", 2}});
  const Pool2dAttrs p = only_pool(ir);
  CHECK(p.kernel_h == 1);
  CHECK(p.pad_top + p.pad_bottom == 0);
  CHECK(p.kernel_w == 3);
  check_values(ir, 16, 10, [&](const float* x, int64_t i) {
    if (i % 5 == 4) return double(x[i / 5 * 8 + 7]) / 2;  // x[7] and the pad's 0 over 2: no overhang
    return pool_cell(x + i / 5 * 8, 1, 8, p, 0, i % 5);
  });
}

TEST_CASE("GlobalMaxPool becomes a Pool2d over the whole image") {
  onnx::ModelProto m = test::model_with_input({3, 5, 4}, 13);
  add_node(m.mutable_graph(), "GlobalMaxPool", {"x"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Pool2d", 1}});
  check_values(ir, 60, 3, [](const float* x, int64_t c) {
    double best = -INFINITY;
    for (int k = 0; k < 20; ++k) best = std::max(best, double(x[c * 20 + k]));
    return best;
  });
}

TEST_CASE("pooling the IR cannot express, or that makes no valid window, is refused naming the node") {
  auto pool = [](const char* op, std::vector<int64_t> dims, int64_t opset) {
    onnx::ModelProto m = test::model_with_input(std::move(dims), opset);
    auto* n = add_node(m.mutable_graph(), op, {"x"}, {"y"});
    set_ints(n, "kernel_shape", {3, 3});
    return m;
  };
  struct Refusal {
    std::function<void(onnx::ModelProto&)> edit;
    StatusCode code;
    const char* needle;
  };
  const std::vector<Refusal> refusals = {
      {[](onnx::ModelProto& m) {  // the Indices output is read (a graph output)
         m.mutable_graph()->mutable_node(0)->add_output("indices");
         m.mutable_graph()->add_output()->set_name("indices");
       },
       StatusCode::kUnsupported, "Indices"},
      {[](onnx::ModelProto& m) {
         set_ints(m.mutable_graph()->mutable_node(0), "pads", {3, 0, 0, 0});
       },
       StatusCode::kBadInput, "smaller than the window"},
      {[](onnx::ModelProto& m) {
         set_ints(m.mutable_graph()->mutable_node(0), "strides", {0, 1});
       },
       StatusCode::kBadInput, "stride"},
      {[](onnx::ModelProto& m) {
         set_ints(m.mutable_graph()->mutable_node(0), "pads", {0, 0, int64_t{1} << 31, 0});
       },
       StatusCode::kBadInput, "pad"},
      {[](onnx::ModelProto& m) { set_int(m.mutable_graph()->mutable_node(0), "ceil_mode", 2); },
       StatusCode::kBadInput, "ceil_mode"},
      {[](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(0)->clear_attribute(); },
       StatusCode::kBadInput, "kernel_shape"},
  };
  for (const Refusal& r : refusals) {
    onnx::ModelProto m = pool("MaxPool", {2, 6, 6}, 12);
    r.edit(m);
    const Status st = try_import(m);
    CHECK_MESSAGE(st.code() == r.code, st.message());
    CHECK_MESSAGE(st.message().find("MaxPool_y") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find(r.needle) != std::string::npos, st.message());
  }
  Status st = try_import(pool("MaxPool", {2, 6, 6, 6}, 12));  // 3-D pooling
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("1-D and 2-D") != std::string::npos, st.message());
  onnx::ModelProto dilated = pool("AveragePool", {2, 6, 6}, 11);  // AveragePool has dilations from opset 19
  set_ints(dilated.mutable_graph()->mutable_node(0), "dilations", {2, 2});
  st = try_import(dilated);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("dilations") != std::string::npos, st.message());
}

TEST_CASE("a Reshape target's own -1 stays -1 in a flatten of the trailing dimensions (x.flatten(2))") {
  // x [B,2,3,4]; the IR target: 0 for a kept dimension, -1 where the file's -1 merges the trailing
  // dimensions after kept ones (as the .pth route writes flatten(2); the channels-last passes match only
  // {0, 0, -1}), the static size otherwise (a split into heads stays static: fuse_attention reads h and d).
  struct Case {
    std::vector<int64_t> target, ir;
  };
  const Case cases[] = {{{0, 0, -1}, {0, 0, -1}},
                        {{0, -1}, {0, -1}},
                        {{0, 0, 12}, {0, 0, 12}},
                        {{0, -1, 4}, {0, 6, 4}},
                        {{0, 6, -1}, {0, 6, 4}},
                        {{0, -1, 3, 4}, {0, 0, 0, 0}},
                        {{0, 0, 0, 2, -1}, {0, 0, 0, 2, 2}}};
  for (const Case& c : cases) {
    CAPTURE(c.target.size());
    CAPTURE(c.target[1]);
    onnx::ModelProto m = test::model_with_input({2, 3, 4}, 14);
    auto* g = m.mutable_graph();
    constant(g, "target", test::int_tensor("", {static_cast<int64_t>(c.target.size())}, c.target));
    add_node(g, "Reshape", {"x", "target"}, {"r"});
    add_node(g, "Neg", {"r"}, {"y"});
    const Graph ir = import_model(m);
    REQUIRE(ops_of(ir) == std::map<std::string, int>{{"Mul", 1}, {"Reshape", 1}});
    for (const Node& n : ir.nodes)
      if (n.type == OpType::kReshape) CHECK(std::get<ReshapeAttrs>(n.attrs).shape == c.ir);
    check_values(ir, 24, 24, [](const float* x, int64_t i) { return -double(x[i]); });
  }
}

TEST_CASE(
    "two Transposes of one value: the later is read from the earlier's output (torch's folding undone)") {
  // x [B,2,3,4]: a = Transpose(x, 0,1,3,2) [B,2,4,3], b = Transpose(x, 0,2,1,3) [B,3,2,4] (as torch writes
  // b = a.permute(0,3,1,2) once it folds the two); y = Reshape(a, [B,24]) + Reshape(b, [B,24]).
  onnx::ModelProto m = test::model_with_input({2, 3, 4}, 14);
  auto* g = m.mutable_graph();
  set_ints(add_node(g, "Transpose", {"x"}, {"a"}), "perm", {0, 1, 3, 2});
  set_ints(add_node(g, "Transpose", {"x"}, {"b"}), "perm", {0, 2, 1, 3});
  constant(g, "flat", test::int_tensor("", {2}, {0, -1}));
  add_node(g, "Reshape", {"a", "flat"}, {"af"});
  add_node(g, "Reshape", {"b", "flat"}, {"bf"});
  add_node(g, "Add", {"af", "bf"}, {"y"});
  const Graph ir = import_model(m);
  REQUIRE(ops_of(ir) == std::map<std::string, int>{{"Add", 1}, {"Reshape", 2}, {"Transpose", 2}});
  std::vector<const Node*> t;
  for (const Node& n : ir.nodes)
    if (n.type == OpType::kTranspose) t.push_back(&n);
  CHECK(t[0]->inputs[0] == ir.inputs[0]);
  CHECK(t[1]->inputs[0] == t[0]->outputs[0]);
  // a holds (B, c, l, k) and b (B, k, c, l): b = a.permute(0,3,1,2).
  CHECK(std::get<TransposeAttrs>(t[1]->attrs).perm == std::vector<int32_t>{0, 3, 1, 2});
  check_values(ir, 24, 24, [](const float* x, int64_t i) {
    // a [2,4,3]: a[c][l][k] = x[c][k][l]; b [3,2,4]: b[k][c][l] = x[c][k][l].
    const int64_t c = i / 12, l = i / 3 % 4, k = i % 3;
    const int64_t k2 = i / 8, c2 = i / 4 % 2, l2 = i % 4;
    return double(x[c * 12 + k * 4 + l]) + x[c2 * 12 + k2 * 4 + l2];
  });
}

namespace {

// x [B,3,5] -> op over `axes` as opset `opset` writes it: axes an attribute before 18 (ReduceSum: 13), a
// constant input from then on. With `exp_first` the op reads Exp(x).
onnx::ModelProto reduce_model(const std::string& op, int64_t opset, std::vector<int64_t> axes, bool keepdims,
                              bool exp_first = false) {
  onnx::ModelProto m = test::model_with_input({3, 5}, opset);
  auto* g = m.mutable_graph();
  if (exp_first) add_node(g, "Exp", {"x"}, {"e"});
  const std::string src = exp_first ? "e" : "x";
  onnx::NodeProto* n;
  if (opset >= (op == "ReduceSum" ? 13 : 18)) {
    constant(g, "axes", test::int_tensor("", {static_cast<int64_t>(axes.size())}, axes));
    n = add_node(g, op, {src, "axes"}, {"y"});
  } else {
    n = add_node(g, op, {src}, {"y"});
    set_ints(n, "axes", axes);
  }
  set_int(n, "keepdims", keepdims ? 1 : 0);
  return m;
}

}  // namespace

TEST_CASE("every Reduce* op, axes as attribute (opset 13) and as input (opset 18), against its formula") {
  struct Case {
    const char* op;
    const char* ir_op;
    std::function<double(const std::vector<double>&)> f;
  };
  auto fold = [](double init, std::function<double(double, double)> step) {
    return [init, step](const std::vector<double>& v) {
      double r = init;
      for (double x : v) r = step(r, x);
      return r;
    };
  };
  const Case cases[] = {
      {"ReduceMean", "ReduceMean",
       [](const std::vector<double>& v) { return (v[0] + v[1] + v[2] + v[3] + v[4]) / 5; }},
      {"ReduceSum", "ReduceSum", fold(0, [](double r, double x) { return r + x; })},
      {"ReduceMax", "ReduceMax", fold(-INFINITY, [](double r, double x) { return std::max(r, x); })},
      {"ReduceMin", "Reduce", fold(INFINITY, [](double r, double x) { return std::min(r, x); })},
      {"ReduceProd", "Reduce", fold(1, [](double r, double x) { return r * x; })},
      {"ReduceL1", "Reduce", fold(0, [](double r, double x) { return r + std::fabs(x); })},
      {"ReduceL2", "Reduce",
       [](const std::vector<double>& v) {
         double s = 0;
         for (double x : v) s += x * x;
         return std::sqrt(s);
       }},
      {"ReduceSumSquare", "Reduce", fold(0, [](double r, double x) { return r + x * x; })},
      {"ReduceLogSumExp", "Reduce",
       [](const std::vector<double>& v) {
         double s = 0;
         for (double x : v) s += std::exp(x);
         return std::log(s);
       }},
  };
  for (const Case& c : cases)
    for (int64_t opset : {13, 17, 18}) {
      CAPTURE(c.op);
      CAPTURE(opset);
      const Graph ir = import_model(reduce_model(c.op, opset, {-1}, false));
      REQUIRE(ops_of(ir) == std::map<std::string, int>{{c.ir_op, 1}});
      check_values(ir, 15, 3, [&](const float* x, int64_t i) {
        std::vector<double> v(x + i * 5, x + i * 5 + 5);
        return c.f(v);
      });
    }
  // ReduceLogSum of Exp(x) over two axes with keepdims: log(sum e^x) again, [B,1,1].
  for (int64_t opset : {13, 18}) {
    const Graph ir = import_model(reduce_model("ReduceLogSum", opset, {1, -1}, true, true));
    REQUIRE(ops_of(ir) == std::map<std::string, int>{{"Exp", 1}, {"Reduce", 1}});
    const ReduceAttrs& a = std::get<ReduceAttrs>(ir.nodes[1].attrs);
    CHECK(a.kind == ReduceKind::kLogSum);
    CHECK(a.axes == std::vector<int32_t>{1, 2});
    CHECK(a.keepdims);
    check_values(ir, 15, 1, [](const float* x, int64_t) {
      double s = 0;
      for (int k = 0; k < 15; ++k) s += std::exp(double(x[k]));
      return std::log(s);
    });
  }
}

TEST_CASE("Reduce* at opset 18: no axes reduce every axis, or nothing with noop_with_empty_axes") {
  onnx::ModelProto all = test::model_with_input({3, 5}, 18);
  add_node(all.mutable_graph(), "ReduceMin", {"x"}, {"y"});
  const Graph ir = import_model(all);
  REQUIRE(ops_of(ir) == std::map<std::string, int>{{"Reduce", 1}});
  CHECK(std::get<ReduceAttrs>(ir.nodes[0].attrs).axes == std::vector<int32_t>{0, 1, 2});
  CHECK(std::get<ReduceAttrs>(ir.nodes[0].attrs).keepdims);
  // An empty axes input with noop_with_empty_axes: the Relu reads x itself.
  onnx::ModelProto noop = test::model_with_input({3, 5}, 18);
  auto* g = noop.mutable_graph();
  constant(g, "none", test::int_tensor("", {0}, {}));
  set_int(add_node(g, "ReduceL2", {"x", "none"}, {"r"}), "noop_with_empty_axes", 1);
  add_node(g, "Relu", {"r"}, {"y"});
  const Graph relu = import_model(noop);
  CHECK(ops_of(relu) == std::map<std::string, int>{{"Relu", 1}});
  check_values(relu, 15, 15, [](const float* x, int64_t i) { return std::max(0.0, double(x[i])); });
}

TEST_CASE("Reduce* in the other opset's form, with computed or repeated axes, is refused naming the node") {
  struct Case {
    std::function<onnx::ModelProto()> model;
    StatusCode code;
    const char* needle;
  };
  const Case cases[] = {
      {[] {  // opset 18 with the axes attribute of opset 17
         onnx::ModelProto m = test::model_with_input({3, 5}, 18);
         set_ints(add_node(m.mutable_graph(), "ReduceMean", {"x"}, {"y"}), "axes", {1});
         return m;
       },
       StatusCode::kBadInput, "(ReduceMean, opset 18): 'axes' is an input since opset 18, not an attribute"},
      {[] {  // ReduceSum's axes are an input from opset 13
         onnx::ModelProto m = test::model_with_input({3, 5}, 13);
         set_ints(add_node(m.mutable_graph(), "ReduceSum", {"x"}, {"y"}), "axes", {1});
         return m;
       },
       StatusCode::kBadInput, "(ReduceSum, opset 13): 'axes' is an input since opset 13"},
      {[] {  // an axes input before opset 18
         onnx::ModelProto m = test::model_with_input({3, 5}, 17);
         constant(m.mutable_graph(), "axes", test::int_tensor("", {1}, {1}));
         add_node(m.mutable_graph(), "ReduceProd", {"x", "axes"}, {"y"});
         return m;
       },
       StatusCode::kBadInput, "(ReduceProd, opset 17): takes one input before opset 18"},
      {[] {
         onnx::ModelProto m = test::model_with_input({3, 5}, 17);
         set_int(add_node(m.mutable_graph(), "ReduceMax", {"x"}, {"y"}), "noop_with_empty_axes", 1);
         return m;
       },
       StatusCode::kBadInput, "has no attribute 'noop_with_empty_axes' before opset 18"},
      {[] {  // axes computed from the input
         onnx::ModelProto m = test::model_with_input({3, 5}, 18);
         set_int(add_node(m.mutable_graph(), "Cast", {"x"}, {"xi"}), "to", onnx::TensorProto::FLOAT);
         add_node(m.mutable_graph(), "ReduceL1", {"x", "xi"}, {"y"});
         return m;
       },
       StatusCode::kUnsupported, "(ReduceL1, opset 18): axes must be a constant known at import"},
      {[] {
         onnx::ModelProto m = test::model_with_input({3, 5}, 13);
         set_ints(add_node(m.mutable_graph(), "ReduceMin", {"x"}, {"y"}), "axes", {2, -1});
         return m;
       },
       StatusCode::kBadInput, "(ReduceMin, opset 13): axis -1 is listed twice"},
      {[] {
         onnx::ModelProto m = test::model_with_input({3, 5}, 13);
         set_ints(add_node(m.mutable_graph(), "ReduceLogSumExp", {"x"}, {"y"}), "axes", {3});
         return m;
       },
       StatusCode::kBadInput, "axis 3 is out of range for rank 3"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.needle);
    const Status st = try_import(c.model());
    CHECK(st.code() == c.code);
    CHECK_MESSAGE(st.message().find(c.needle) != std::string::npos, st.message());
  }
}

TEST_CASE("LogSoftmax: any axis at opset 13, the last one before; one LogSoftmax op") {
  for (int64_t axis : {1, -1, 2}) {
    CAPTURE(axis);
    onnx::ModelProto m = test::model_with_input({3, 5}, 13);
    set_int(add_node(m.mutable_graph(), "LogSoftmax", {"x"}, {"y"}), "axis", axis);
    const Graph ir = import_model(m);
    REQUIRE(ops_of(ir) == std::map<std::string, int>{{"LogSoftmax", 1}});
    const bool rows = axis != 1;  // over the 5 columns of a row, else over the 3 rows of a column
    check_values(ir, 15, 15, [&](const float* x, int64_t i) {
      const int64_t r = i / 5, c = i % 5;
      double s = 0;
      for (int k = 0; k < (rows ? 5 : 3); ++k) s += std::exp(double(rows ? x[r * 5 + k] : x[k * 5 + c]));
      return double(x[i]) - std::log(s);
    });
  }
  onnx::ModelProto last = test::model_with_input({7}, 11);  // default axis 1 of [B,7]: the last one
  add_node(last.mutable_graph(), "LogSoftmax", {"x"}, {"y"});
  CHECK(ops_of(import_model(last)) == std::map<std::string, int>{{"LogSoftmax", 1}});
  onnx::ModelProto flat = test::model_with_input({3, 5}, 12);
  add_node(flat.mutable_graph(), "LogSoftmax", {"x"}, {"y"});
  const Status st = try_import(flat);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("(LogSoftmax, opset 12): axis 1 before opset 13") != std::string::npos,
                st.message());
}

TEST_CASE("InstanceNormalization becomes one InstanceNorm (biased variance per plane, epsilon)") {
  onnx::ModelProto m = test::model_with_input({3, 4, 5}, 17);
  auto* g = m.mutable_graph();
  *g->add_initializer() = test::float_tensor("scale", {3}, {1.5f, -0.5f, 2.0f});
  *g->add_initializer() = test::float_tensor("bias", {3}, {0.25f, -1.0f, 3.0f});
  set_float(add_node(g, "InstanceNormalization", {"x", "scale", "bias"}, {"y"}), "epsilon", 1e-3f);
  const Graph ir = import_model(m);
  REQUIRE(ops_of(ir) == std::map<std::string, int>{{"InstanceNorm", 1}});
  CHECK(std::get<InstanceNormAttrs>(ir.nodes[0].attrs).eps == 1e-3f);
  const double scale[] = {1.5, -0.5, 2.0}, bias[] = {0.25, -1.0, 3.0};
  check_values(ir, 60, 60, [&](const float* x, int64_t i) {
    const int64_t c = i / 20;
    double mean = 0, var = 0;
    for (int k = 0; k < 20; ++k) mean += x[c * 20 + k];
    mean /= 20;
    for (int k = 0; k < 20; ++k) var += (x[c * 20 + k] - mean) * (x[c * 20 + k] - mean);
    var /= 20;
    return scale[c] * (x[i] - mean) / std::sqrt(var + 1e-3) + bias[c];
  });
  onnx::ModelProto flat = test::model_with_input({3}, 17);
  *flat.mutable_graph()->add_initializer() = test::float_tensor("scale", {3}, {1, 1, 1});
  *flat.mutable_graph()->add_initializer() = test::float_tensor("bias", {3}, {0, 0, 0});
  add_node(flat.mutable_graph(), "InstanceNormalization", {"x", "scale", "bias"}, {"y"});
  const Status st = try_import(flat);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(
      st.message().find("(InstanceNormalization, opset 17): input must be [N,C,D1,...]") != std::string::npos,
      st.message());
}

TEST_CASE(
    "opset 18: Split's num_outputs (the last part smaller); ops whose 18 form is not read are refused") {
  onnx::ModelProto m = test::model_with_input({3, 7}, 18);
  auto* g = m.mutable_graph();
  auto* split = add_node(g, "Split", {"x"}, {"a", "b", "c"});
  set_int(split, "axis", -1);
  set_int(split, "num_outputs", 3);
  set_int(add_node(g, "Concat", {"c", "a", "b"}, {"y"}), "axis", -1);
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Concat", 1}, {"Slice", 3}});
  // parts [0,3), [3,6), [6,7) of each row, concatenated c, a, b
  check_values(ir, 21, 21, [](const float* x, int64_t i) {
    const int64_t r = i / 7, col = i % 7;
    return double(x[r * 7 + (col == 0 ? 6 : col - 1)]);
  });
  // num_outputs is opset 18's.
  onnx::ModelProto old = test::model_with_input({3, 7}, 17);
  auto* old_split = add_node(old.mutable_graph(), "Split", {"x"}, {"y", "z"});
  set_int(old_split, "axis", 1);
  set_int(old_split, "num_outputs", 2);
  Status st = try_import(old);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(st.message().find("(Split, opset 17): has no attribute 'num_outputs' before opset 18") !=
                    std::string::npos,
                st.message());
}

namespace {

onnx::TensorProto bool_tensor(std::vector<int64_t> dims, std::vector<int32_t> values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::BOOL);
  for (int64_t d : dims) t.add_dims(d);
  for (int32_t v : values) t.add_int32_data(v);
  return t;
}

void set_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

}  // namespace

TEST_CASE("strided and reversed Slice (Swin's x[:, 0::2] and flips) become Slice version 2 with a step") {
  // x [B,6,5,3]: axis 1 from 0 by 2, axis 2 reversed (start -1, end INT64_MIN, step -1) -> [B,3,5,3]; then
  // axis 3 from 2 down to 0 by -2 (indices 2, 0) -> [B,3,5,2].
  onnx::ModelProto m = test::model_with_input({6, 5, 3}, 13);
  auto* g = m.mutable_graph();
  constant(g, "starts", test::int_tensor("", {3}, {0, -1, 2}));
  constant(g, "ends", test::int_tensor("", {3}, {INT64_MAX, INT64_MIN, -100}));
  constant(g, "axes", test::int_tensor("", {3}, {1, 2, -1}));
  constant(g, "steps", test::int_tensor("", {3}, {2, -1, -2}));
  add_node(g, "Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Slice", 3}});
  for (const Node& n : ir.nodes) CHECK(n.version == 2);
  check_values(ir, 90, 30, [](const float* x, int64_t i) {
    const int64_t r = i / 10, c = (i / 2) % 5, k = i % 2;
    return double(x[(2 * r * 5 + (4 - c)) * 3 + (2 - 2 * k)]);
  });
  // A step-1 slice stays version 1 (what older readers load).
  onnx::ModelProto plain = test::model_with_input({6}, 13);
  constant(plain.mutable_graph(), "s", test::int_tensor("", {1}, {1}));
  constant(plain.mutable_graph(), "e", test::int_tensor("", {1}, {4}));
  constant(plain.mutable_graph(), "a", test::int_tensor("", {1}, {1}));
  add_node(plain.mutable_graph(), "Slice", {"x", "s", "e", "a"}, {"y"});
  CHECK(import_model(plain).nodes[0].version == 1);
  // Step 0 is malformed; an empty reversed range is refused.
  for (const auto& [step, start, end, code] :
       {std::tuple{int64_t{0}, int64_t{0}, int64_t{3}, StatusCode::kBadInput},
        std::tuple{int64_t{-1}, int64_t{1}, int64_t{4}, StatusCode::kUnsupported}}) {
    onnx::ModelProto bad = test::model_with_input({6}, 13);
    auto* bg = bad.mutable_graph();
    constant(bg, "s", test::int_tensor("", {1}, {start}));
    constant(bg, "e", test::int_tensor("", {1}, {end}));
    constant(bg, "a", test::int_tensor("", {1}, {1}));
    constant(bg, "st", test::int_tensor("", {1}, {step}));
    add_node(bg, "Slice", {"x", "s", "e", "a", "st"}, {"y"});
    const Status st = try_import(bad);
    CHECK_MESSAGE(st.code() == code, st.message());
    CHECK_MESSAGE(st.message().find("Slice_y") != std::string::npos, st.message());
  }
}

TEST_CASE("comparisons, Not/And/Or/Xor, Cast to bool and Where on activations compute with float 0/1") {
  // cond = (!(x < 0.1) && x >= -0.5) || x <= -1 || (x xor-ish: Xor(x > 1.2, bool const)); y = Where(cond, x,
  // -100) on x [B,2,7].
  onnx::ModelProto m = test::model_with_input({2, 7}, 13);
  auto* g = m.mutable_graph();
  constant(g, "k", scalar(0.1f));
  constant(g, "lo", scalar(-0.5f));
  constant(g, "floor", scalar(-1.0f));
  constant(g, "hi", scalar(1.2f));
  constant(g, "fill", scalar(-100.0f));
  constant(g, "mask", bool_tensor({7}, {1, 0, 0, 1, 0, 0, 0}));
  add_node(g, "Less", {"x", "k"}, {"lt"});
  add_node(g, "Not", {"lt"}, {"ge"});
  add_node(g, "GreaterOrEqual", {"x", "lo"}, {"above"});
  add_node(g, "And", {"ge", "above"}, {"band"});
  add_node(g, "LessOrEqual", {"x", "floor"}, {"low"});
  add_node(g, "Or", {"band", "low"}, {"c1"});
  add_node(g, "Greater", {"x", "hi"}, {"big"});
  add_node(g, "Xor", {"big", "mask"}, {"flip"});
  add_node(g, "Or", {"c1", "flip"}, {"cond"});
  add_node(g, "Where", {"cond", "x", "fill"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Compare", 6}, {"Max", 2}, {"Mul", 1}, {"Where", 1}});
  check_values(ir, 14, 14, [](const float* x, int64_t i) {
    const float v = x[i];
    const bool mask = i % 7 == 0 || i % 7 == 3;
    const bool cond = (!(v < 0.1f) && v >= -0.5f) || v <= -1.0f || ((v > 1.2f) != mask);
    return cond ? double(v) : -100.0;
  });
  // Cast to bool is x != 0; Equal against a constant; a bool constant as the condition.
  onnx::ModelProto c = test::model_with_input({5}, 13);
  auto* cg = c.mutable_graph();
  constant(cg, "half", scalar(0.5f));
  constant(cg, "sel", bool_tensor({5}, {1, 1, 0, 0, 1}));
  add_node(cg, "Relu", {"x"}, {"r"});
  set_int(add_node(cg, "Cast", {"r"}, {"nz"}), "to", onnx::TensorProto::BOOL);
  add_node(cg, "Where", {"nz", "half", "x"}, {"w"});
  add_node(cg, "Where", {"sel", "w", "r"}, {"y"});
  const Graph cir = import_model(c);
  CHECK(ops_of(cir) == std::map<std::string, int>{{"Compare", 1}, {"Relu", 1}, {"Where", 2}});
  check_values(cir, 5, 5, [](const float* x, int64_t i) {
    const double r = std::max(x[i], 0.0f), w = r != 0 ? 0.5 : x[i];
    return (i == 2 || i == 3) ? r : w;
  });
  // A bool graph output stays unsupported.
  onnx::ModelProto out = test::model_with_input({5}, 13);
  constant(out.mutable_graph(), "half", scalar(0.5f));
  add_node(out.mutable_graph(), "Equal", {"x", "half"}, {"y"});
  const Status st = try_import(out);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("graph output 'y' is a bool") != std::string::npos, st.message());
}

TEST_CASE(
    "Pad (constant with constant_value, reflect, edge) becomes one Pad; cropping and the batch are refused") {
  auto pad_model = [](const std::string& mode, std::vector<int64_t> pads, bool value) {
    onnx::ModelProto m = test::model_with_input({2, 3, 4}, 13);
    auto* g = m.mutable_graph();
    constant(g, "pads", test::int_tensor("", {8}, std::move(pads)));
    constant(g, "v", scalar(2.5f));
    auto* n = add_node(
        g, "Pad", value ? std::vector<std::string>{"x", "pads", "v"} : std::vector<std::string>{"x", "pads"},
        {"y"});
    set_string(n, "mode", mode);
    return m;
  };
  // [B,2,3,4] -> [B,3,6,5]: channel +1 after, rows +1/+2, columns +1 before.
  const std::vector<int64_t> pads = {0, 0, 1, 1, 0, 1, 2, 0};
  auto src = [](int64_t i, int64_t n, const std::string& mode, bool* inside) {
    *inside = i >= 0 && i < n;
    if (mode == "reflect") return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
    return i < 0 ? int64_t{0} : (i >= n ? n - 1 : i);
  };
  for (const std::string mode : {"constant", "reflect", "edge"}) {
    CAPTURE(mode);
    const Graph ir = import_model(pad_model(mode, pads, mode == "constant"));
    CHECK(ops_of(ir) == std::map<std::string, int>{{"Pad", 1}});
    check_values(ir, 24, 90, [&](const float* x, int64_t i) {
      const int64_t c = i / 30, r = (i / 5) % 6, k = i % 5;
      bool in_c, in_r, in_k;
      const int64_t sc = src(c, 2, mode, &in_c), sr = src(r - 1, 3, mode, &in_r),
                    sk = src(k - 1, 4, mode, &in_k);
      if (mode == "constant" && !(in_c && in_r && in_k)) return 2.5;
      return double(x[(sc * 3 + sr) * 4 + sk]);
    });
  }
  for (const auto& [m, needle] :
       {std::pair{pad_model("constant", {0, 0, -1, 0, 0, 0, 0, 0}, false), "negative pads"},
        std::pair{pad_model("edge", {1, 0, 0, 0, 0, 0, 0, 0}, false), "pads the batch axis"},
        std::pair{pad_model("wrap", pads, false), "mode 'wrap'"}}) {
    const Status st = try_import(m);
    CHECK(st.code() == StatusCode::kUnsupported);
    CHECK_MESSAGE(st.message().find("Pad_y") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find(needle) != std::string::npos, st.message());
  }
}

TEST_CASE("Expand read by any op becomes Expand; Tile becomes Reshape, Expand, Reshape") {
  // x [B,2,1,4] expanded to [2,3,4] -> [B,2,3,4], read by Relu.
  onnx::ModelProto m = test::model_with_input({2, 1, 4}, 13);
  auto* g = m.mutable_graph();
  constant(g, "shape", test::int_tensor("", {3}, {2, 3, 4}));
  add_node(g, "Expand", {"x", "shape"}, {"e"});
  add_node(g, "Relu", {"e"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Expand", 1}, {"Relu", 1}});
  check_values(ir, 8, 24,
               [](const float* x, int64_t i) { return std::max(0.0, double(x[(i / 12) * 4 + i % 4])); });
  // Tile x [B,2,3] by [1,2,3] -> [B,4,9]: y[i][j] = x[i % 2][j % 3].
  onnx::ModelProto t = test::model_with_input({2, 3}, 13);
  constant(t.mutable_graph(), "reps", test::int_tensor("", {3}, {1, 2, 3}));
  add_node(t.mutable_graph(), "Tile", {"x", "reps"}, {"y"});
  const Graph tir = import_model(t);
  CHECK(ops_of(tir) == std::map<std::string, int>{{"Expand", 1}, {"Reshape", 2}});
  check_values(tir, 6, 36,
               [](const float* x, int64_t i) { return double(x[((i / 9) % 2) * 3 + (i % 9) % 3]); });
  // Tiling the batch is refused.
  onnx::ModelProto tb = test::model_with_input({2, 3}, 13);
  constant(tb.mutable_graph(), "reps", test::int_tensor("", {3}, {2, 1, 1}));
  add_node(tb.mutable_graph(), "Tile", {"x", "reps"}, {"y"});
  const Status st = try_import(tb);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("tiles the batch axis") != std::string::npos, st.message());
}

TEST_CASE("Einsum of two operands becomes Transpose + MatMul (+ Reshape); other equations are refused") {
  // Attention: q = x, k = x + 0.5, both [B,2,3,4]; s = einsum("bhid,bhjd->bhij") [B,2,3,3]; then
  // o = einsum("bhij,bhjd->bhid", s, k) [B,2,3,4].
  onnx::ModelProto m = test::model_with_input({2, 3, 4}, 13);
  auto* g = m.mutable_graph();
  constant(g, "half", scalar(0.5f));
  add_node(g, "Add", {"x", "half"}, {"k"});
  set_string(add_node(g, "Einsum", {"x", "k"}, {"s"}), "equation", "bhid,bhjd->bhij");
  set_string(add_node(g, "Einsum", {"s", "k"}, {"y"}), "equation", "bhij, bhjd -> bhid");
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Add", 1}, {"MatMul", 2}, {"Transpose", 1}});
  check_values(ir, 24, 24, [](const float* x, int64_t e) {
    const int64_t h = e / 12, i = (e / 4) % 3, d = e % 4;
    const float* q = x + h * 12;
    double o = 0;
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int c = 0; c < 4; ++c) s += double(q[i * 4 + c]) * (double(q[j * 4 + c]) + 0.5);
      o += s * (double(q[j * 4 + d]) + 0.5);
    }
    return o;
  });
  // A constant right operand with an ellipsis on the left, and a transposed output: "...ij,kj->...ki".
  onnx::ModelProto w = test::model_with_input({2, 3, 4}, 13);
  *w.mutable_graph()->add_initializer() = test::pattern_tensor("w", {5, 4}, -0.03f);
  set_string(add_node(w.mutable_graph(), "Einsum", {"x", "w"}, {"y"}), "equation", "...ij,kj->...ki");
  const Graph wir = import_model(w);
  const auto wt = test::pattern_tensor("", {5, 4}, -0.03f);
  check_values(wir, 24, 30, [&](const float* x, int64_t e) {
    const int64_t h = e / 15, k = (e / 3) % 5, i = e % 3;
    double s = 0;
    for (int j = 0; j < 4; ++j)
      s += double(x[(h * 3 + i) * 4 + j]) * wt.float_data(static_cast<int>(k * 4 + j));
    return s;
  });
  for (const auto& [eq, needle] :
       {std::pair{"bhii,bhij->bhij", "repeats"}, std::pair{"bhij,bhjd->bh", "summed within one operand"}}) {
    onnx::ModelProto bad = test::model_with_input({2, 3, 3}, 13);
    set_string(add_node(bad.mutable_graph(), "Einsum", {"x", "x"}, {"y"}), "equation", eq);
    const Status st = try_import(bad);
    CHECK(st.code() == StatusCode::kUnsupported);
    CHECK_MESSAGE(st.message().find(std::string("equation '") + eq) != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find(needle) != std::string::npos, st.message());
  }
}

TEST_CASE("a squeeze-and-excitation block as torch.onnx.export writes it plans to one SqueezeExcite") {
  // x [B,6,5,3] -> mean over H,W -> Conv 1x1 (6 -> 2) -> act -> Conv 1x1 (2 -> 6) -> gate -> Mul(x, gate):
  // torchvision's SqueezeExcitation (GlobalAveragePool, Relu, Sigmoid), MobileNetV3's (HardSigmoid with
  // torch's alpha 1/6) and timm's / EfficientNet's (x.mean((2, 3), keepdim=True), SiLU as x·Sigmoid(x)).
  const int64_t c = 6, cr = 2, hw = 15;
  for (int form = 0; form < 3; ++form) {
    CAPTURE(form);
    const bool hard = form == 1, mean = form == 2;
    onnx::ModelProto m = test::model_with_input({c, 5, 3}, 13);
    auto* g = m.mutable_graph();
    *g->add_initializer() = test::pattern_tensor("w1", {cr, c, 1, 1}, -0.03f);
    *g->add_initializer() = test::pattern_tensor("b1", {cr}, 0.1f);
    *g->add_initializer() = test::pattern_tensor("w2", {c, cr, 1, 1}, -0.05f);
    *g->add_initializer() = test::pattern_tensor("b2", {c}, -0.02f);
    if (mean) {
      auto* r = add_node(g, "ReduceMean", {"x"}, {"s"});
      set_ints(r, "axes", {2, 3});
      set_int(r, "keepdims", 1);
    } else {
      add_node(g, "GlobalAveragePool", {"x"}, {"s"});
    }
    add_node(g, "Conv", {"s", "w1", "b1"}, {"h0"});
    if (mean) {  // SiLU exported as x·Sigmoid(x)
      add_node(g, "Sigmoid", {"h0"}, {"hs"});
      add_node(g, "Mul", {"h0", "hs"}, {"h"});
    } else {
      add_node(g, "Relu", {"h0"}, {"h"});
    }
    add_node(g, "Conv", {"h", "w2", "b2"}, {"z"});
    if (hard) {
      auto* n = add_node(g, "HardSigmoid", {"z"}, {"gate"});
      auto* a = n->add_attribute();
      a->set_name("alpha");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(1.0f / 6.0f);
    } else {
      add_node(g, "Sigmoid", {"z"}, {"gate"});
    }
    add_node(g, "Mul", {"x", "gate"}, {"y"});
    const Graph ir = import_model(m);
    std::map<std::string, int> want{
        {mean ? "ReduceMean" : "AdaptiveAvgPool2d", 1}, {"Conv2d", 2}, {"Mul", 1}, {"Unary", mean ? 2 : 1}};
    CHECK(ops_of(ir) == want);
    if (!mean) {  // the importer folds Conv + Relu into the conv's ReLU epilogue, which the pass takes too
      int relu_convs = 0;
      for (const Node& n : ir.nodes)
        relu_convs +=
            n.type == OpType::kConv2d && std::get<Conv2dAttrs>(n.attrs).activation == Activation::kRelu;
      CHECK(relu_convs == 1);
    }
    // Planned: the whole block is one SqueezeExcite on ref and cpu.
    for (const char* backend : {"ref", "cpu"}) {
      auto s = test::make_session(as_model(ir), backend, 3);
      CHECK(test::planned_ops(*s) == std::map<std::string, int>{{"SqueezeExcite", 1}});
    }
    check_values(ir, c * hw, c * hw, [&](const float* x, int64_t i) {
      auto w = [](int64_t k, float base) { return base + 0.01 * ((k * 7) % 13); };
      double h[cr];
      for (int64_t j = 0; j < cr; ++j) {
        double v = w(j, 0.1f);
        for (int64_t k = 0; k < c; ++k) {
          double sum = 0;
          for (int64_t p = 0; p < hw; ++p) sum += x[k * hw + p];
          v += w(j * c + k, -0.03f) * sum / hw;
        }
        h[j] = mean ? v / (1 + std::exp(-v)) : std::max(v, 0.0);
      }
      const int64_t ch = i / hw;
      double z = w(ch, -0.02f);
      for (int64_t j = 0; j < cr; ++j) z += w(ch * cr + j, -0.05f) * h[j];
      const double gate = hard ? std::min(1.0, std::max(0.0, z / 6 + 0.5)) : 1 / (1 + std::exp(-z));
      return x[i] * gate;
    });
  }
}

TEST_CASE("DepthToSpace (DCR, CRD) and SpaceToDepth become Reshape, Transpose, Reshape with ONNX's layout") {
  struct Case {
    const char* op;
    const char* mode;  // "" : not given (DepthToSpace's default is DCR)
    int64_t b, c, h, w;
  };
  // Odd sizes and a block of 3; the index rules are ONNX's definitions written per element.
  const Case cases[] = {{"DepthToSpace", "", 2, 12, 3, 5},    {"DepthToSpace", "DCR", 3, 18, 2, 3},
                        {"DepthToSpace", "CRD", 2, 12, 3, 5}, {"DepthToSpace", "CRD", 3, 18, 1, 3},
                        {"SpaceToDepth", "", 2, 3, 4, 6},     {"SpaceToDepth", "", 3, 2, 3, 9}};
  for (const Case& c : cases) {
    CAPTURE(c.op);
    CAPTURE(c.mode);
    CAPTURE(c.b);
    onnx::ModelProto m = test::model_with_input({c.c, c.h, c.w}, 13);
    auto* n = add_node(m.mutable_graph(), c.op, {"x"}, {"y"});
    set_int(n, "blocksize", c.b);
    if (*c.mode) set_string(n, "mode", c.mode);
    const Graph ir = import_model(m);
    CHECK(ops_of(ir) == std::map<std::string, int>{{"Reshape", 2}, {"Transpose", 1}});
    const int64_t b = c.b, numel = c.c * c.h * c.w;
    check_values(ir, numel, numel, [&](const float* x, int64_t i) {
      const auto at = [&](int64_t ch, int64_t y, int64_t xw) { return double(x[(ch * c.h + y) * c.w + xw]); };
      if (std::string(c.op) == "DepthToSpace") {
        // y[co][yo][xo] with co < C/b², yo < H·b, xo < W·b; block offsets i = yo % b, j = xo % b.
        const int64_t cout = c.c / (b * b), ho = c.h * b, wo = c.w * b;
        const int64_t co = i / (ho * wo), yo = (i / wo) % ho, xo = i % wo;
        const int64_t bi = yo % b, bj = xo % b;
        const int64_t src_c =
            std::string(c.mode) == "CRD" ? co * b * b + bi * b + bj : (bi * b + bj) * cout + co;
        return at(src_c, yo / b, xo / b);
      }
      // SpaceToDepth: y[(i·b + j)·C + ch][yo][xo] = x[ch][yo·b + i][xo·b + j].
      const int64_t ho = c.h / b, wo = c.w / b;
      const int64_t co = i / (ho * wo), yo = (i / wo) % ho, xo = i % wo;
      const int64_t ch = co % c.c, blk = co / c.c;
      return at(ch, yo * b + blk / b, xo * b + blk % b);
    });
  }
  // Block size 1 is the input itself; channels (or a spatial size) not divisible by the block are refused.
  onnx::ModelProto one = test::model_with_input({4, 2, 3}, 13);
  auto* n1 = add_node(one.mutable_graph(), "DepthToSpace", {"x"}, {"y1"});
  set_int(n1, "blocksize", 1);
  add_node(one.mutable_graph(), "Relu", {"y1"}, {"y"});
  CHECK(ops_of(import_model(one)) == std::map<std::string, int>{{"Relu", 1}});
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    CAPTURE(op);
    onnx::ModelProto bad = test::model_with_input({6, 3, 5}, 13);
    set_int(add_node(bad.mutable_graph(), op, {"x"}, {"y"}), "blocksize", 2);
    const Status st = try_import(bad);
    CHECK(st.code() == StatusCode::kBadInput);  // the importer's malformed-file code
    CHECK_MESSAGE(st.message().find(std::string(op) + "_y") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find("blocksize") != std::string::npos, st.message());
  }
}

TEST_CASE("Mod becomes Fmod (fmod = 1, the dividend's sign) or Mod (fmod = 0, the divisor's), broadcasting") {
  for (int64_t fmod : {0, 1}) {
    CAPTURE(fmod);
    // y = Mod(3·x, d) on x [B,3,5] with d [5] of both signs.
    onnx::ModelProto m = test::model_with_input({3, 5}, 13);
    auto* g = m.mutable_graph();
    constant(g, "three", scalar(3.0f));
    constant(g, "d", test::float_tensor("", {5}, {0.7f, -0.7f, 1.3f, -2.1f, 0.45f}));
    add_node(g, "Mul", {"x", "three"}, {"x3"});
    set_int(add_node(g, "Mod", {"x3", "d"}, {"y"}), "fmod", fmod);
    const Graph ir = import_model(m);
    CHECK(ops_of(ir) == std::map<std::string, int>{{"Mul", 1}, {fmod ? "Fmod" : "Mod", 1}});
    const double d[] = {0.7f, -0.7f, 1.3f, -2.1f, 0.45f};
    check_values(ir, 15, 15, [&](const float* x, int64_t i) {
      const double a = x[i] * 3.0f, b = d[i % 5];
      const double r = std::fmod(a, b);  // exact
      if (fmod || r == 0) return fmod ? r : std::copysign(0.0, b);
      return (b < 0) != (r < 0) ? r + b : r;  // numpy.mod: the divisor's sign
    });
  }
  onnx::ModelProto bad = test::model_with_input({3, 5}, 13);
  constant(bad.mutable_graph(), "d", scalar(2.0f));
  set_int(add_node(bad.mutable_graph(), "Mod", {"x", "d"}, {"y"}), "fmod", 2);
  const Status st = try_import(bad);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(st.message().find("fmod 2") != std::string::npos, st.message());
}

TEST_CASE(
    "a Concat of many inputs (a DenseNet block's 25 feature maps) is one Concat; more than the IR's limit is "
    "refused") {
  // x [B,2,3] concatenated 25 times on the last axis [B,2,75]: y[r][3k + j] = x[r][j] (DenseNet-121's third
  // block concatenates 25 feature maps; the IR's Concat takes up to kMaxOpInputs)
  onnx::ModelProto m = test::model_with_input({2, 3}, 17);
  set_int(add_node(m.mutable_graph(), "Concat", std::vector<std::string>(25, "x"), {"y"}), "axis", -1);
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Concat", 1}});
  check_values(ir, 6, 150, [](const float* x, int64_t i) { return double(x[(i / 75) * 3 + i % 3]); });
  onnx::ModelProto wide = test::model_with_input({2, 3}, 17);
  auto* concat = add_node(wide.mutable_graph(), "Concat",
                          std::vector<std::string>(static_cast<size_t>(kMaxOpInputs) + 1, "x"), {"y"});
  concat->set_name("too_wide");
  set_int(concat, "axis", -1);
  const Status st = try_import(wide);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("too_wide") != std::string::npos, st.message());
  CHECK_MESSAGE(st.message().find("65 inputs (the IR's Concat takes at most 64)") != std::string::npos,
                st.message());
}

// The forms torch 2's dynamo exporter writes (tests/data/onnx_torch2 has whole models): opsets 19-25,
// Gelu-20, GELU with the halving before the multiplication by x, opset 18's Pad axes, as_strided's
// batch-indexed Gather, GatherND of constants, scaled_dot_product_attention's split scale.
TEST_CASE("Gelu (opset 20) becomes Gelu, exact or tanh; refused before opset 20 and for unknown forms") {
  for (const char* approx : {"none", "tanh"}) {
    CAPTURE(approx);
    onnx::ModelProto m = test::model_with_input({6}, 20);
    auto* n = add_node(m.mutable_graph(), "Gelu", {"x"}, {"y"});
    auto* a = n->add_attribute();
    a->set_name("approximate");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(approx);
    const Graph ir = import_model(m);
    CHECK(ops_of(ir) == std::map<std::string, int>{{"Gelu", 1}});
    const bool tanh_form = std::string(approx) == "tanh";
    CHECK(std::get<GeluAttrs>(ir.nodes[0].attrs).approximation ==
          (tanh_form ? GeluApproximation::kTanh : GeluApproximation::kErf));
    check_values(ir, 6, 6, [tanh_form](const float* x, int64_t i) {
      const double v = x[i];
      return tanh_form ? 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
                       : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    });
    a->set_s("sigmoid");
    Graph g;
    std::string log;
    Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &g, &log);
    CHECK(st.code() == StatusCode::kBadInput);
    CHECK_MESSAGE(st.message().find("(Gelu, opset 20): approximate 'sigmoid'") != std::string::npos,
                  st.message());
  }
  onnx::ModelProto old = test::model_with_input({6}, 17);
  add_node(old.mutable_graph(), "Gelu", {"x"}, {"y"});
  Graph g;
  std::string log;
  Status st = convert::import_onnx(old, convert::OnnxImportOptions{}, &g, &log);
  CHECK_MESSAGE(st.message().find("Gelu is an operator of opset 20 and later") != std::string::npos,
                st.message());
}

TEST_CASE(
    "opsets 19-25 import the ops whose float semantics they kept; their new forms are refused by name") {
  for (int64_t opset : {19, 21, 23, 25}) {
    CAPTURE(opset);
    onnx::ModelProto m = test::model_with_input({2, 3}, opset);
    auto* g = m.mutable_graph();
    *g->add_initializer() = test::int_tensor("shape", {2}, {0, 6});
    add_node(g, "Relu", {"x"}, {"r"});
    add_node(g, "Reshape", {"r", "shape"}, {"y"});
    const Graph ir = import_model(m);
    check_values(ir, 6, 6, [](const float* x, int64_t i) { return std::max(0.0, double(x[i])); });
  }
  // (Opset 26 is refused when the file is read: malformed_test.cpp.)
  Graph g;
  std::string log;
  // Forms new at 19 are refused by name: Pad's wrap mode.
  onnx::ModelProto wrap = test::model_with_input({3, 7}, 19);
  *wrap.mutable_graph()->add_initializer() = test::int_tensor("pads", {6}, {0, 0, 1, 0, 0, 1});
  auto* pad = add_node(wrap.mutable_graph(), "Pad", {"x", "pads"}, {"y"});
  auto* a = pad->add_attribute();
  a->set_name("mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("wrap");
  Status st = convert::import_onnx(wrap, convert::OnnxImportOptions{}, &g, &log);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("(Pad, opset 19): mode 'wrap'") != std::string::npos, st.message());
}

TEST_CASE("GELU written x · (0.5 · (1 + erf(x/√2))) becomes one Gelu(erf)") {
  onnx::ModelProto m = test::model_with_input({5}, 18);
  auto* g = m.mutable_graph();
  constant(g, "r2", scalar(1.4142135381698608f));
  constant(g, "one", scalar(1.0f));
  constant(g, "half", scalar(0.5f));
  add_node(g, "Div", {"x", "r2"}, {"s"});
  add_node(g, "Erf", {"s"}, {"e"});
  add_node(g, "Add", {"e", "one"}, {"e1"});
  add_node(g, "Mul", {"half", "e1"}, {"h"});
  add_node(g, "Mul", {"x", "h"}, {"y"});
  const Graph ir = import_model(m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Gelu", 1}});
  check_values(ir, 5, 5, [](const float* x, int64_t i) {
    const double v = x[i];
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  });
}

TEST_CASE("Pad with opset 18's axes input pads only the axes named") {
  onnx::ModelProto m = test::model_with_input({3, 7}, 18);
  auto* g = m.mutable_graph();
  *g->add_initializer() = test::int_tensor("pads", {2}, {1, 2});
  *g->add_initializer() = test::int_tensor("axes", {1}, {-1});
  add_node(g, "Relu", {"x"}, {"r"});
  add_node(g, "Pad", {"r", "pads", "", "axes"}, {"y"});
  const Graph ir = import_model(m);
  check_values(ir, 21, 30, [](const float* x, int64_t i) {
    const int64_t row = i / 10, col = i % 10 - 1;
    return col < 0 || col >= 7 ? 0.0 : std::max(0.0, double(x[row * 7 + col]));
  });
  *g->mutable_initializer(1) = test::int_tensor("axes", {2}, {2, 2});
  *g->mutable_initializer(0) = test::int_tensor("pads", {4}, {1, 1, 1, 1});
  Graph bad;
  std::string log;
  Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &bad, &log);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(st.message().find("axis 2 named twice") != std::string::npos, st.message());
}

namespace {

// as_strided over a [B,2,3] input as the dynamo exporter writes it with a dynamic batch: the flat input
// gathered at b·6 + c[r], c from the per-image strides (s_1, s_2) of an output [B,d1,d2].
onnx::ModelProto batch_index_gather(int64_t d1, int64_t d2, int64_t s1, int64_t s2, int64_t stride = 6) {
  onnx::ModelProto m = test::model_with_input({2, 3}, 20);
  auto* g = m.mutable_graph();
  *g->add_initializer() = test::int_tensor("flat", {1}, {-1});
  *g->add_initializer() = test::int_tensor("zero", {}, {0});
  *g->add_initializer() = test::int_tensor("one", {}, {1});
  *g->add_initializer() = test::int_tensor("stride", {}, {stride});
  *g->add_initializer() = test::int_tensor("axes", {2}, {1, 2});
  std::vector<int64_t> rows, cols;
  for (int64_t i = 0; i < d1; ++i) rows.push_back(i * s1);
  for (int64_t j = 0; j < d2; ++j) cols.push_back(j * s2);
  *g->add_initializer() = test::int_tensor("rows", {1, d1, 1}, rows);
  *g->add_initializer() = test::int_tensor("cols", {1, 1, d2}, cols);
  add_node(g, "Relu", {"x"}, {"r"});
  add_node(g, "Reshape", {"r", "flat"}, {"data"});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_node(g, "Gather", {"shape", "zero"}, {"batch"});
  add_node(g, "Range", {"zero", "batch", "one"}, {"b"});
  add_node(g, "Mul", {"b", "stride"}, {"base"});
  add_node(g, "Unsqueeze", {"base", "axes"}, {"base3"});
  add_node(g, "Add", {"base3", "rows"}, {"i1"});
  add_node(g, "Add", {"i1", "cols"}, {"idx"});
  add_node(g, "Gather", {"data", "idx"}, {"y"});
  return m;
}

}  // namespace

TEST_CASE("a Gather through indices computed from the batch (as_strided) becomes a Reshape or a Transpose") {
  // The same layout: a Reshape.
  Graph ir = import_model(batch_index_gather(3, 2, 2, 1));
  CHECK(ops_of(ir).count("Transpose") == 0);
  check_values(ir, 6, 6, [](const float* x, int64_t i) { return std::max(0.0, double(x[i])); });
  // The transposed layout ([B,3,2] read with strides (1, 3)): a Transpose.
  ir = import_model(batch_index_gather(3, 2, 1, 3));
  CHECK(ops_of(ir).count("Transpose") == 1);
  check_values(ir, 6, 6, [](const float* x, int64_t i) {
    const int64_t a = i / 2, b = i % 2;
    return std::max(0.0, double(x[b * 3 + a]));
  });
  // Indices reaching into the next image, or not a permutation: refused, naming the Range.
  for (auto m : {batch_index_gather(3, 2, 2, 1, 5), batch_index_gather(3, 2, 1, 1)}) {
    Graph g;
    std::string log;
    Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &g, &log);
    CHECK(!st.ok());
    CHECK_MESSAGE(st.message().find("(Range, opset 20)") != std::string::npos, st.message());
  }
}

TEST_CASE("GatherND of constants folds (Swin V2's bias table) and checks its indices") {
  onnx::ModelProto m = test::model_with_input({6}, 20);
  auto* g = m.mutable_graph();
  *g->add_initializer() = test::float_tensor("table", {3, 2}, {1, 2, 3, 4, 5, 6});
  *g->add_initializer() = test::int_tensor("index", {3, 1}, {2, -3, 1});
  *g->add_initializer() = test::int_tensor("flat", {1}, {6});
  add_node(g, "GatherND", {"table", "index"}, {"picked"});
  add_node(g, "Reshape", {"picked", "flat"}, {"bias"});
  add_node(g, "Add", {"x", "bias"}, {"y"});
  const Graph ir = import_model(m);
  check_values(ir, 6, 6, [](const float* x, int64_t i) {
    const double bias[6] = {5, 6, 1, 2, 3, 4};
    return double(x[i]) + bias[i];
  });
  *g->mutable_initializer(1) = test::int_tensor("index", {3, 1}, {2, 3, 1});
  Graph bad;
  std::string log;
  Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &bad, &log);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK_MESSAGE(st.message().find("index 3 is out of range for dimension 0") != std::string::npos,
                st.message());
}

namespace {

// x [B,5,8] -> Q, K, V = x·W -> Attention (opset 23) with 2 heads of 4, as 3-D operands or as 4-D heads.
onnx::ModelProto attention_model(bool four_d) {
  onnx::ModelProto m = test::model_with_input({5, 8}, 23);
  auto* g = m.mutable_graph();
  for (const char* w : {"wq", "wk", "wv"})
    *g->add_initializer() = test::pattern_tensor(w, {8, 8},
                                                 w[1] == 'q'   ? -0.3f
                                                 : w[1] == 'k' ? -0.2f
                                                               : -0.1f);
  *g->add_initializer() = test::int_tensor("heads", {4}, {0, 0, 2, 4});
  for (const char* p : {"q", "k", "v"}) {
    const std::string s(p);
    add_node(g, "MatMul", {"x", "w" + s}, {s + "3"});
    if (!four_d) continue;
    add_node(g, "Reshape", {s + "3", "heads"}, {s + "r"});
    set_ints(add_node(g, "Transpose", {s + "r"}, {s + "4"}), "perm", {0, 2, 1, 3});
  }
  auto* a = add_node(
      g, "Attention",
      four_d ? std::vector<std::string>{"q4", "k4", "v4"} : std::vector<std::string>{"q3", "k3", "v3"},
      {four_d ? "o" : "y"});
  if (!four_d) {
    set_int(a, "q_num_heads", 2);
    set_int(a, "kv_num_heads", 2);
    return m;
  }
  *g->add_initializer() = test::int_tensor("merge", {3}, {0, 0, 8});
  set_ints(add_node(g, "Transpose", {"o"}, {"om"}), "perm", {0, 2, 1, 3});
  add_node(g, "Reshape", {"om", "merge"}, {"y"});
  return m;
}

}  // namespace

TEST_CASE("Attention (opset 23) lowers to the attention the planner fuses; masks, caches, causal refused") {
  for (bool four_d : {false, true}) {
    CAPTURE(four_d);
    onnx::ModelProto m = attention_model(four_d);
    const Graph ir = import_model(m);
    auto s = test::make_session(as_model(ir), "cpu", 2);
    CHECK_MESSAGE(test::planned_ops(*s).count("SoftmaxAttention") == 1, test::ops_str(test::planned_ops(*s)));
    std::vector<float> w[3];
    for (int p = 0; p < 3; ++p) {
      const auto& t = m.graph().initializer(p);
      w[p].assign(t.float_data().begin(), t.float_data().end());
    }
    check_values(ir, 40, 40, [&w](const float* x, int64_t i) {
      double proj[3][5][8] = {};
      for (int p = 0; p < 3; ++p)
        for (int n = 0; n < 5; ++n)
          for (int o = 0; o < 8; ++o)
            for (int c = 0; c < 8; ++c) proj[p][n][o] += double(x[n * 8 + c]) * w[p][c * 8 + o];
      const int64_t n = i / 8, o = i % 8, h = o / 4;
      double sc[5], mx = -1e300, sum = 0;
      for (int j = 0; j < 5; ++j) {
        sc[j] = 0;
        for (int e = 0; e < 4; ++e) sc[j] += proj[0][n][h * 4 + e] * proj[1][j][h * 4 + e];
        sc[j] *= 0.5;
        mx = std::max(mx, sc[j]);
      }
      double acc = 0;
      for (int j = 0; j < 5; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
      for (int j = 0; j < 5; ++j) acc += sc[j] * proj[2][j][o];
      return acc / sum;
    });
  }
  auto refused = [](onnx::ModelProto m, const char* why) {
    Graph g;
    std::string log;
    Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &g, &log);
    CHECK(!st.ok());
    CHECK_MESSAGE(st.message().find(why) != std::string::npos, st.message());
  };
  onnx::ModelProto causal = attention_model(false);
  set_int(causal.mutable_graph()->mutable_node(3), "is_causal", 1);
  refused(causal, "(Attention, opset 23): is_causal 1");
  onnx::ModelProto masked = attention_model(false);
  masked.mutable_graph()->mutable_node(3)->add_input("x");
  refused(masked, "(Attention, opset 23): an attention mask (input 3)");
  onnx::ModelProto old = attention_model(false);
  old.mutable_opset_import(0)->set_version(22);
  refused(old, "Attention is an operator of opset 23 and later");
}

TEST_CASE(
    "a static-batch export's Gather of a flattened image with constant indices is the per-image gather") {
  // The dynamo exporter without dynamic shapes: as_strided's indices are constants for the exported batch
  // (here 1 image: c itself; for 2 images the second's are offset by one image).
  for (int64_t exported : {1, 2}) {
    CAPTURE(exported);
    onnx::ModelProto m = test::model_with_input({2, 3}, 20);
    auto* g = m.mutable_graph();
    g->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(0)
        ->set_dim_value(exported);
    std::vector<int64_t> idx;
    for (int64_t b = 0; b < exported; ++b)
      for (int64_t a = 0; a < 3; ++a)
        for (int64_t c = 0; c < 2; ++c) idx.push_back(b * 6 + a + 3 * c);  // [B,3,2] read with strides (1, 3)
    *g->add_initializer() = test::int_tensor("flat", {1}, {-1});
    *g->add_initializer() = test::int_tensor("idx", {exported, 3, 2}, idx);
    add_node(g, "Relu", {"x"}, {"r"});
    add_node(g, "Reshape", {"r", "flat"}, {"data"});
    add_node(g, "Gather", {"data", "idx"}, {"y"});
    const Graph ir = import_model(m);
    CHECK(ops_of(ir).count("Transpose") == 1);
    check_values(ir, 6, 6, [](const float* x, int64_t i) {
      const int64_t a = i / 2, b = i % 2;
      return std::max(0.0, double(x[b * 3 + a]));
    });
  }
}
