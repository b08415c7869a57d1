// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Constant folding at import (docs/onnx.md, "Folding"): the integer evaluators Swin's shape and mask
// arithmetic needs (Mod with fmod 0/1, And/Or/Xor, ScatterND), Dropout as the identity, the generic folding
// of float nodes by the reference kernels, and the limit on folded constants. Each folded value reaches the
// graph as the constant of one Add (y = x + folded), whose values are checked against the formula.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnx/importer.h"
#include "onnx_build.h"

using namespace vitrt;
using test::add_node;
using test::set_int;

namespace {

Status try_import(const onnx::ModelProto& m, Graph* g, std::string* log) {
  return convert::import_onnx(m, convert::OnnxImportOptions{}, g, log);
}

std::map<std::string, int> ops_of(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes) ++ops[op_type_name(n.type)];
  return ops;
}

onnx::NodeProto* constant(onnx::GraphProto* g, const std::string& name, const onnx::TensorProto& t) {
  auto* n = add_node(g, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
  return n;
}

void set_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

onnx::TensorProto bool_tensor(std::vector<int64_t> dims, std::vector<int32_t> values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::BOOL);
  for (int64_t d : dims) t.add_dims(d);
  for (int32_t v : values) t.add_int32_data(v);
  return t;
}

// A model y = x + c, x [B, dims...], where the caller's nodes compute the float value `c` from constants.
onnx::ModelProto plus_folded(std::vector<int64_t> dims,
                             const std::function<void(onnx::GraphProto*)>& make_c) {
  onnx::ModelProto m = test::model_with_input(std::move(dims), 17);
  make_c(m.mutable_graph());
  add_node(m.mutable_graph(), "Add", {"x", "c"}, {"y"});
  return m;
}

// The imported graph must be the one Add; returns its constant operand's shape and values.
std::vector<float> folded_values(const onnx::ModelProto& m, Shape* shape = nullptr) {
  Graph g;
  std::string log;
  const Status st = try_import(m, &g, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(ops_of(g) == std::map<std::string, int>{{"Add", 1}});
  for (int32_t t : g.nodes[0].inputs) {
    const Tensor& c = g.tensors[t];
    if (!c.is_constant) continue;
    if (shape) *shape = c.shape;
    return std::vector<float>(c.f32(), c.f32() + c.shape.numel());
  }
  FAIL("the Add reads no constant");
  return {};
}

// Integer constant `name` -> float `c` (Cast), so integer results reach the graph.
void cast_to_c(onnx::GraphProto* g, const std::string& name) {
  set_int(add_node(g, "Cast", {name}, {"c"}), "to", onnx::TensorProto::FLOAT);
}

int64_t numpy_mod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

}  // namespace

TEST_CASE("integer Mod folds with fmod 0 (the divisor's sign) and 1 (the dividend's), broadcasting") {
  const std::vector<int64_t> a = {7, -7, 0, 13, -13, 5, 9, -1, 4, -6, 11, 3, -2, 8, 1};  // [3,5]
  const std::vector<int64_t> b = {3, -3, 5, -4, 2};                                      // [5]
  for (int64_t fmod : {0, 1}) {
    CAPTURE(fmod);
    const auto m = plus_folded({3, 5}, [&](onnx::GraphProto* g) {
      constant(g, "a", test::int_tensor("", {3, 5}, a));
      constant(g, "b", test::int_tensor("", {5}, b));
      set_int(add_node(g, "Mod", {"a", "b"}, {"r"}), "fmod", fmod);
      cast_to_c(g, "r");
    });
    const std::vector<float> got = folded_values(m);
    REQUIRE(got.size() == 15);
    for (size_t i = 0; i < 15; ++i) {
      const int64_t x = a[i], y = b[i % 5];
      CHECK(got[i] == static_cast<float>(fmod ? x % y : numpy_mod(x, y)));
    }
  }
  // A zero divisor is malformed; fmod other than 0/1 too.
  struct Bad {
    int64_t divisor, fmod;
    const char* what;
  };
  for (const Bad bad : {Bad{0, 0, "modulo by zero"}, Bad{3, 2, "fmod 2"}}) {
    const int64_t divisor = bad.divisor, fmod = bad.fmod;
    const char* what = bad.what;
    const auto m = plus_folded({1}, [&](onnx::GraphProto* g) {
      constant(g, "a", test::int_tensor("", {1}, {5}));
      constant(g, "b", test::int_tensor("", {1}, {divisor}));
      set_int(add_node(g, "Mod", {"a", "b"}, {"r"}), "fmod", fmod);
      cast_to_c(g, "r");
    });
    Graph g;
    std::string log;
    const Status st = try_import(m, &g, &log);
    CHECK(st.code() == StatusCode::kBadInput);
    CHECK_MESSAGE(st.message().find("Mod_r") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find(what) != std::string::npos, st.message());
  }
}

TEST_CASE("Mod of a batch-dependent size folds where the batch drops out (c + k·B mod m, m dividing k)") {
  // pad = (7·B + 10) mod 7 = 3 at every batch (fmod 0); (B + 10) mod 7 depends on the batch, and fmod 1
  // (C's remainder) is refused for any batch-dependent dividend.
  struct Case {
    int64_t k, fmod;
    bool ok;
  };
  for (const Case c : {Case{7, 0, true}, Case{1, 0, false}, Case{7, 1, false}}) {
    const int64_t k = c.k, fmod = c.fmod;
    const bool ok = c.ok;
    CAPTURE(k);
    CAPTURE(fmod);
    const auto m = plus_folded({2}, [&](onnx::GraphProto* g) {
      add_node(g, "Shape", {"x"}, {"shape"});
      constant(g, "zero", test::int_tensor("", {}, {0}));
      add_node(g, "Gather", {"shape", "zero"}, {"batch"});
      constant(g, "k", test::int_tensor("", {}, {k}));
      constant(g, "ten", test::int_tensor("", {}, {10}));
      constant(g, "seven", test::int_tensor("", {}, {7}));
      add_node(g, "Mul", {"batch", "k"}, {"kb"});
      add_node(g, "Add", {"kb", "ten"}, {"kb10"});
      set_int(add_node(g, "Mod", {"kb10", "seven"}, {"r"}), "fmod", fmod);
      cast_to_c(g, "r");
    });
    if (ok) {
      const std::vector<float> got = folded_values(m);
      REQUIRE(got.size() == 1);
      CHECK(got[0] == 3.0f);
    } else {
      Graph g;
      std::string log;
      const Status st = try_import(m, &g, &log);
      CHECK(st.code() == StatusCode::kUnsupported);
      CHECK_MESSAGE(st.message().find("Mod_r") != std::string::npos, st.message());
      CHECK_MESSAGE(st.message().find("depends on the batch") != std::string::npos, st.message());
    }
  }
}

TEST_CASE("And, Or, Xor and Not of bool constants fold, broadcasting; Where reads the result") {
  const std::vector<int32_t> p = {1, 0, 1, 1, 0, 0};  // [2,3]
  const std::vector<int32_t> q = {1, 0, 0};           // [3]
  for (const std::string op : {"And", "Or", "Xor"}) {
    CAPTURE(op);
    const auto m = plus_folded({2, 3}, [&](onnx::GraphProto* g) {
      constant(g, "p", bool_tensor({2, 3}, p));
      constant(g, "q", bool_tensor({3}, q));
      add_node(g, op, {"p", "q"}, {"r"});
      add_node(g, "Not", {"r"}, {"nr"});
      constant(g, "one", test::float_tensor("", {}, {1.5f}));
      constant(g, "two", test::float_tensor("", {}, {-2.0f}));
      add_node(g, "Where", {"nr", "one", "two"}, {"c"});
    });
    const std::vector<float> got = folded_values(m);
    REQUIRE(got.size() == 6);
    for (size_t i = 0; i < 6; ++i) {
      const bool x = p[i] != 0, y = q[i % 3] != 0;
      const bool r = op == "And" ? x && y : op == "Or" ? x || y : x != y;
      CHECK(got[i] == (!r ? 1.5f : -2.0f));
    }
  }
}

TEST_CASE("ScatterND of constants folds: index tuples of 1, 2 and all 3 dimensions, negative indices") {
  // data [3,4,5] (values 0.5 + e), updates written at the tuples; a later equal tuple overwrites.
  struct Case {
    std::vector<int64_t> indices_shape;
    std::vector<int64_t> indices;
  };
  const Case cases[] = {
      {{2, 1}, {2, -3}},                                   // k = 1: whole [4,5] blocks
      {{3, 2}, {0, 3, -1, 0, 0, 3}},                       // k = 2: rows of 5; the third overwrites the first
      {{2, 2, 3}, {2, 3, 4, 0, 0, 0, 1, -2, 1, 2, 3, 4}},  // k = 3: single elements; indices [2,2,3]
  };
  const std::vector<int64_t> ds = {3, 4, 5};
  for (const Case& c : cases) {
    const int64_t k = c.indices_shape.back();
    CAPTURE(k);
    std::vector<int64_t> us(c.indices_shape.begin(), c.indices_shape.end() - 1);
    us.insert(us.end(), ds.begin() + k, ds.end());
    int64_t un = 1;
    for (int64_t d : us) un *= d;
    std::vector<float> data(60), upd(static_cast<size_t>(un));
    for (size_t e = 0; e < data.size(); ++e) data[e] = 0.5f + static_cast<float>(e);
    for (size_t e = 0; e < upd.size(); ++e) upd[e] = -100.0f - static_cast<float>(e);
    const auto m = plus_folded({3, 4, 5}, [&](onnx::GraphProto* g) {
      constant(g, "data", test::float_tensor("", ds, data));
      constant(g, "idx", test::int_tensor("", c.indices_shape, c.indices));
      constant(g, "upd", test::float_tensor("", us, upd));
      add_node(g, "ScatterND", {"data", "idx", "upd"}, {"c"});
    });
    // Expected: the same scatter written out with explicit strides.
    std::vector<float> want = data;
    const int64_t stride[] = {20, 5, 1};
    const int64_t slice = stride[k - 1];
    const int64_t tuples = static_cast<int64_t>(c.indices.size()) / k;
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t flat = 0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t i = c.indices[t * k + j];
        flat += (i < 0 ? i + ds[j] : i) * stride[j];
      }
      for (int64_t e = 0; e < slice; ++e) want[flat + e] = upd[t * slice + e];
    }
    CHECK(folded_values(m) == want);
  }
}

TEST_CASE("ScatterND of integers folds; malformed indices or updates and other reductions are refused") {
  const auto m = plus_folded({4}, [](onnx::GraphProto* g) {
    constant(g, "data", test::int_tensor("", {4}, {1, 2, 3, 4}));
    constant(g, "idx", test::int_tensor("", {2, 1}, {3, 0}));
    constant(g, "upd", test::int_tensor("", {2}, {-7, 9}));
    add_node(g, "ScatterND", {"data", "idx", "upd"}, {"r"});
    cast_to_c(g, "r");
  });
  CHECK(folded_values(m) == std::vector<float>{9, 2, 3, -7});
  struct Bad {
    std::vector<int64_t> indices_shape, indices, updates_shape;
    const char* reduction;
    StatusCode code;
    const char* what;
  };
  const Bad bad[] = {
      {{1, 1}, {4}, {1}, "none", StatusCode::kBadInput, "out of range"},
      {{1, 1}, {-5}, {1}, "none", StatusCode::kBadInput, "out of range"},
      {{1, 2}, {0, 0}, {1}, "none", StatusCode::kBadInput, "must end in a dimension from 1 to the rank"},
      {{2, 1}, {0, 1}, {3}, "none", StatusCode::kBadInput, "updates are [3], expected [2]"},
      {{1, 1}, {0}, {1}, "add", StatusCode::kUnsupported, "reduction 'add'"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.what);
    const auto mb = plus_folded({4}, [&](onnx::GraphProto* g) {
      constant(g, "data", test::int_tensor("", {4}, {1, 2, 3, 4}));
      constant(g, "idx", test::int_tensor("", b.indices_shape, b.indices));
      std::vector<int64_t> u(static_cast<size_t>(b.updates_shape[0]), 5);
      constant(g, "upd", test::int_tensor("", b.updates_shape, u));
      set_string(add_node(g, "ScatterND", {"data", "idx", "upd"}, {"r"}), "reduction", b.reduction);
      cast_to_c(g, "r");
    });
    Graph g;
    std::string log;
    const Status st = try_import(mb, &g, &log);
    CHECK(st.code() == b.code);
    CHECK_MESSAGE(st.message().find("ScatterND_r") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find(b.what) != std::string::npos, st.message());
  }
}

TEST_CASE(
    "Dropout is removed: training_mode false, or true with ratio 0 (torch's p=0.0 export); else refused") {
  struct Case {
    bool training;
    float ratio;
    bool ok;
  };
  for (const Case c : {Case{false, 0.5f, true}, Case{true, 0.0f, true}, Case{true, 0.1f, false}}) {
    CAPTURE(c.training);
    CAPTURE(c.ratio);
    onnx::ModelProto m = test::model_with_input({3}, 17);
    auto* g = m.mutable_graph();
    constant(g, "ratio", test::float_tensor("", {}, {c.ratio}));
    constant(g, "training", bool_tensor({}, {c.training ? 1 : 0}));
    add_node(g, "Relu", {"x"}, {"r"});
    add_node(g, "Dropout", {"r", "ratio", "training"}, {"y", "mask"});
    Graph ir;
    std::string log;
    const Status st = try_import(m, &ir, &log);
    if (c.ok) {
      REQUIRE_MESSAGE(st.ok(), st.message());
      CHECK(ops_of(ir) == std::map<std::string, int>{{"Relu", 1}});
    } else {
      CHECK(st.code() == StatusCode::kUnsupported);
      CHECK_MESSAGE(st.message().find("Dropout_y") != std::string::npos, st.message());
      CHECK_MESSAGE(st.message().find("ratio other than a constant 0") != std::string::npos, st.message());
    }
  }
  // A constant through a training-mode Dropout with a nonzero ratio is refused the same way.
  const auto m = plus_folded({2}, [](onnx::GraphProto* g) {
    constant(g, "v", test::float_tensor("", {2}, {1, 2}));
    constant(g, "ratio", test::float_tensor("", {}, {0.5f}));
    constant(g, "training", bool_tensor({}, {1}));
    add_node(g, "Dropout", {"v", "ratio", "training"}, {"c"});
  });
  Graph ir;
  std::string log;
  const Status st = try_import(m, &ir, &log);
  CHECK(st.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(st.message().find("ratio other than a constant 0") != std::string::npos, st.message());
}

TEST_CASE("float nodes of constants fold through the reference kernels (Softmax, MatMul, Exp, Mod, Erf)") {
  // c = Softmax(a, axis 1) + MatMul(p, q) · Exp(e) with Mod and Erf on the way: none of these has a fold_ops
  // evaluator, so each is lowered and run once by the reference backend; the graph keeps only y = x + c.
  std::vector<float> a(15), p(6), q(10), e(5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.37f * static_cast<float>(i) - 2.0f;
  for (size_t i = 0; i < p.size(); ++i) p[i] = 0.25f * static_cast<float>(i) - 0.6f;
  for (size_t i = 0; i < q.size(); ++i) q[i] = 0.5f - 0.11f * static_cast<float>(i);
  for (size_t i = 0; i < e.size(); ++i) e[i] = 0.3f * static_cast<float>(i) - 0.7f;
  const auto m = plus_folded({3, 5}, [&](onnx::GraphProto* g) {
    constant(g, "a", test::float_tensor("", {3, 5}, a));
    constant(g, "p", test::float_tensor("", {3, 2}, p));
    constant(g, "q", test::float_tensor("", {2, 5}, q));
    constant(g, "e", test::float_tensor("", {5}, e));
    constant(g, "d", test::float_tensor("", {}, {0.4f}));
    set_int(add_node(g, "Softmax", {"a"}, {"s"}), "axis", 1);
    add_node(g, "MatMul", {"p", "q"}, {"pq"});
    add_node(g, "Exp", {"e"}, {"ex"});
    add_node(g, "Mul", {"pq", "ex"}, {"pqe"});
    add_node(g, "Erf", {"pqe"}, {"erf"});
    add_node(g, "Mod", {"a", "d"}, {"am"});  // fmod 0: numpy.mod
    add_node(g, "Add", {"s", "erf"}, {"s1"});
    add_node(g, "Add", {"s1", "am"}, {"c"});
  });
  Shape shape;
  const std::vector<float> got = folded_values(m, &shape);
  CHECK(shape == Shape{3, 5});
  REQUIRE(got.size() == 15);
  for (int r = 0; r < 3; ++r) {
    double sum = 0;
    for (int j = 0; j < 5; ++j) sum += std::exp(static_cast<double>(a[r * 5 + j]));
    for (int j = 0; j < 5; ++j) {
      const double s = std::exp(static_cast<double>(a[r * 5 + j])) / sum;
      const double pq = static_cast<double>(p[r * 2]) * q[j] + static_cast<double>(p[r * 2 + 1]) * q[5 + j];
      const double am = a[r * 5 + j] - 0.4 * std::floor(a[r * 5 + j] / 0.4);
      const double want = s + std::erf(pq * std::exp(static_cast<double>(e[j]))) + am;
      CAPTURE(r);
      CAPTURE(j);
      CHECK(std::fabs(got[r * 5 + j] - want) <= 1e-5 * (1 + std::fabs(want)));
    }
  }
}

TEST_CASE("folding is bounded: 2^24 elements; fold_ops refuses, a lowered node stays computed at run time") {
  // ConstantOfShape [4097,4097] (16,785,409 elements, just over 2^24) is refused naming the node and shape.
  {
    const auto m = plus_folded({1}, [](onnx::GraphProto* g) {
      constant(g, "shape", test::int_tensor("", {2}, {4097, 4097}));
      add_node(g, "ConstantOfShape", {"shape"}, {"c"});
    });
    Graph ir;
    std::string log;
    const Status st = try_import(m, &ir, &log);
    CHECK(st.code() == StatusCode::kUnsupported);
    CHECK_MESSAGE(st.message().find("ConstantOfShape_c") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find("[4097,4097]") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find("16777216-element limit") != std::string::npos, st.message());
  }
  // MatMul [4097,1] x [1,4097] of constants: not folded, the log names the node and the size, and the op
  // stays in the graph; [4096,1] x [1,4096] (exactly 2^24) folds.
  for (int64_t n : {4097, 4096}) {
    CAPTURE(n);
    onnx::ModelProto m = test::model_with_input({n, n}, 17);
    auto* g = m.mutable_graph();
    constant(g, "u", test::float_tensor("", {n, 1}, std::vector<float>(static_cast<size_t>(n), 0.5f)));
    constant(g, "v", test::float_tensor("", {1, n}, std::vector<float>(static_cast<size_t>(n), 2.0f)));
    add_node(g, "MatMul", {"u", "v"}, {"c"});
    add_node(g, "Add", {"x", "c"}, {"y"});
    Graph ir;
    std::string log;
    const Status st = try_import(m, &ir, &log);
    REQUIRE_MESSAGE(st.ok(), st.message());
    const bool folded = n == 4096;
    CHECK(ops_of(ir).size() == (folded ? 1u : 2u));
    CHECK_MESSAGE((log.find("MatMul_c") != std::string::npos) == !folded, log);
    if (!folded) {
      CHECK_MESSAGE(log.find("[4097,4097]") != std::string::npos, log);
      CHECK_MESSAGE(log.find("16777216 elements") != std::string::npos, log);
    }
  }
}

TEST_CASE(
    "folding is bounded in work too: a MatMul of 1024x1024 constants (2^30 multiply-adds) is not folded") {
  onnx::ModelProto m = test::model_with_input({1024, 1024}, 17);
  auto* g = m.mutable_graph();
  constant(g, "shape", test::int_tensor("", {2}, {1024, 1024}));
  add_node(g, "ConstantOfShape", {"shape"}, {"u"});
  add_node(g, "MatMul", {"u", "u"}, {"c"});
  add_node(g, "Add", {"x", "c"}, {"y"});
  Graph ir;
  std::string log;
  const Status st = try_import(m, &ir, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(ops_of(ir).size() == 2);
  CHECK_MESSAGE(log.find("MatMul_c") != std::string::npos, log);
  CHECK_MESSAGE(log.find("operations, more than the 1073741824 allowed") != std::string::npos, log);
}
