// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The ONNX importer's Trilu, CumSum, GatherElements and TopK (docs/onnx.md) on small hand-built graphs with
// odd shapes and a dynamic batch: the IR op each becomes, its values on ref and cpu at batch 1 and 3 against
// a formula written here (not the kernels' code), and malformed or unsupported forms refused naming the node.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnx/importer.h"
#include "onnx_build.h"
#include "onnx_test_util.h"

using namespace vitrt;
using test::add_node;
using test::set_int;

namespace {

Graph import_model(const onnx::ModelProto& m) {
  Graph g;
  std::string log;
  Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &g, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return g;
}

// The import's error; the test fails when the import succeeds.
Status import_error(const onnx::ModelProto& m) {
  Graph g;
  std::string log;
  Status st = convert::import_onnx(m, convert::OnnxImportOptions{}, &g, &log);
  CHECK_MESSAGE(!st.ok(), "the import should have been refused");
  return st;
}

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

// Runs the model at batch 1 and 3 on ref and cpu (outputs poisoned with NaN); `expect(x, i)` gives output
// element i of one image from that image's input. `tol` 0 asks for exact equality.
void check_values(const Graph& g, int64_t in_per_image, int64_t out_per_image,
                  const std::function<double(const float* x, int64_t i)>& expect, double tol = 0) {
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
          CAPTURE(i);
          CHECK(std::fabs(y[b * out_per_image + i] - want) <= tol * (1 + std::fabs(want)));
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

void check_refused(const onnx::ModelProto& m, const std::string& node, const std::string& what) {
  const Status st = import_error(m);
  CHECK_MESSAGE(st.message().find(node) != std::string::npos, st.message());
  CHECK_MESSAGE(st.message().find(what) != std::string::npos, st.message());
}

}  // namespace

TEST_CASE("Trilu: upper and lower, k given (negative, positive, past the edge) or not, becomes one Trilu") {
  struct Case {
    bool has_upper;
    int64_t upper;
    bool has_k;
    int64_t k;
  };
  for (const Case& c : {Case{false, 1, false, 0}, Case{true, 0, false, 0}, Case{true, 1, true, -1},
                        Case{true, 0, true, 2}, Case{true, 1, true, 9}, Case{true, 0, true, -4}}) {
    CAPTURE(c.upper);
    CAPTURE(c.k);
    // x [B, 3, 4, 5] -> Trilu over the 4x5 matrices.
    onnx::ModelProto m = test::model_with_input({3, 4, 5}, 14);
    auto* g = m.mutable_graph();
    std::vector<std::string> in{"x"};
    if (c.has_k) {
      constant(g, "k", test::int_tensor("", {}, {c.k}));
      in.push_back("k");
    }
    auto* n = add_node(g, "Trilu", in, {"y"});
    if (c.has_upper) set_int(n, "upper", c.upper);
    const Graph ir = import_model(m);
    CHECK(ops_of(ir) == std::map<std::string, int>{{"Trilu", 1}});
    // Written to a model file and loaded back (TriluOptions, op code 48): the same attributes.
    std::vector<uint8_t> storage;
    Graph image_model = ir;  // a model file's input is an image: 3 channels of 4x5
    image_model.metadata.preprocess.resize_shorter = 5;
    image_model.metadata.preprocess.crop_h = 4;
    image_model.metadata.preprocess.crop_w = 5;
    const auto loaded = test::load_graph(image_model, &storage);
    REQUIRE(loaded->graph.nodes.size() == 1);
    const auto& t = std::get<TriluAttrs>(loaded->graph.nodes[0].attrs);
    CHECK(t.upper == (c.upper == 1));
    CHECK(t.k == c.k);
    check_values(ir, 60, 60, [&](const float* x, int64_t e) {
      const int64_t i = (e / 5) % 4, j = e % 5;
      const bool keep = c.upper ? j - i >= c.k : j - i <= c.k;
      return keep ? double(x[e]) : 0.0;
    });
  }
}

TEST_CASE("Trilu: a malformed upper or k, a computed k or a 1-D input is refused, naming the node") {
  auto model = [](std::vector<int64_t> dims) {
    onnx::ModelProto m = test::model_with_input(dims, 14);
    return m;
  };
  {
    onnx::ModelProto m = model({3, 4});
    set_int(add_node(m.mutable_graph(), "Trilu", {"x"}, {"y"}), "upper", 2);
    check_refused(m, "Trilu_y", "upper 2");
  }
  {
    onnx::ModelProto m = model({3, 4});
    constant(m.mutable_graph(), "k", test::int_tensor("", {2}, {1, 2}));
    add_node(m.mutable_graph(), "Trilu", {"x", "k"}, {"y"});
    check_refused(m, "Trilu_y", "k must be one integer");
  }
  {
    onnx::ModelProto m = model({3, 4});
    constant(m.mutable_graph(), "k", test::float_tensor("", {}, {1.0f}));
    add_node(m.mutable_graph(), "Trilu", {"x", "k"}, {"y"});
    check_refused(m, "Trilu_y", "k must be one integer");
  }
  {
    onnx::ModelProto m = model({3, 4});
    auto* g = m.mutable_graph();
    add_node(g, "Shape", {"x"}, {"s"});
    constant(g, "i", test::int_tensor("", {}, {0}));
    add_node(g, "Gather", {"s", "i"}, {"k"});
    add_node(g, "Trilu", {"x", "k"}, {"y"});
    check_refused(m, "Trilu_y", "batch");
  }
  {
    onnx::ModelProto m = model({});
    add_node(m.mutable_graph(), "Trilu", {"x"}, {"y"});
    check_refused(m, "Trilu_y", "rank 1");
  }
}

TEST_CASE("CumSum: every axis (negative too), exclusive and reverse, becomes one CumSum summing in order") {
  struct Case {
    int64_t axis;
    bool axis_int32;
    int64_t exclusive, reverse;
  };
  for (const Case& c : {Case{1, false, 0, 0}, Case{2, true, 1, 0}, Case{-1, false, 0, 1},
                        Case{3, false, 1, 1}, Case{-3, true, 1, 1}}) {
    CAPTURE(c.axis);
    CAPTURE(c.exclusive);
    CAPTURE(c.reverse);
    // x [B, 3, 4, 5]; axis counted on the image's rank 4.
    onnx::ModelProto m = test::model_with_input({3, 4, 5}, 14);
    auto* g = m.mutable_graph();
    onnx::TensorProto axis = test::int_tensor("", {}, {c.axis});
    if (c.axis_int32) {
      axis.clear_int64_data();
      axis.set_data_type(onnx::TensorProto::INT32);
      axis.add_int32_data(static_cast<int32_t>(c.axis));
    }
    constant(g, "axis", axis);
    auto* n = add_node(g, "CumSum", {"x", "axis"}, {"y"});
    if (c.exclusive) set_int(n, "exclusive", 1);
    if (c.reverse) set_int(n, "reverse", 1);
    const Graph ir = import_model(m);
    CHECK(ops_of(ir) == std::map<std::string, int>{{"CumSum", 1}});
    // Written to a model file and loaded back (CumSumOptions, op code 46): the same attributes.
    std::vector<uint8_t> storage;
    Graph image_model = ir;  // a model file's input is an image: 3 channels of 4x5
    image_model.metadata.preprocess.resize_shorter = 5;
    image_model.metadata.preprocess.crop_h = 4;
    image_model.metadata.preprocess.crop_w = 5;
    const auto loaded = test::load_graph(image_model, &storage);
    REQUIRE(loaded->graph.nodes.size() == 1);
    const auto& cs = std::get<CumSumAttrs>(loaded->graph.nodes[0].attrs);
    CHECK(cs.axis == (c.axis < 0 ? c.axis + 4 : c.axis));
    CHECK(cs.exclusive == (c.exclusive == 1));
    CHECK(cs.reverse == (c.reverse == 1));
    const int ax = static_cast<int>(c.axis < 0 ? c.axis + 4 : c.axis);
    const int64_t dims[] = {1, 3, 4, 5}, strides[] = {60, 20, 5, 1};
    // A float32 running sum taken in the axis' order (numpy.cumsum in float32): the kernels must give it
    // exactly.
    check_values(ir, 60, 60, [&](const float* x, int64_t e) {
      const int64_t pos = (e / strides[ax]) % dims[ax], start = e - pos * strides[ax];
      float sum = 0;
      for (int64_t s = 0; s < dims[ax]; ++s) {
        const int64_t k = c.reverse ? dims[ax] - 1 - s : s;
        if (k == pos && c.exclusive) return double(sum);
        sum += x[start + k * strides[ax]];
        if (k == pos) return double(sum);
      }
      return double(NAN);
    });
  }
}

TEST_CASE("CumSum: a computed, malformed or out-of-range axis or a bad flag is refused, naming the node") {
  {
    onnx::ModelProto m = test::model_with_input({3, 4}, 14);
    constant(m.mutable_graph(), "axis", test::int_tensor("", {}, {3}));
    add_node(m.mutable_graph(), "CumSum", {"x", "axis"}, {"y"});
    check_refused(m, "CumSum_y", "out of range");
  }
  {
    onnx::ModelProto m = test::model_with_input({3, 4}, 14);
    constant(m.mutable_graph(), "axis", test::int_tensor("", {2}, {0, 1}));
    add_node(m.mutable_graph(), "CumSum", {"x", "axis"}, {"y"});
    check_refused(m, "CumSum_y", "one integer");
  }
  {
    onnx::ModelProto m = test::model_with_input({3, 4}, 14);
    constant(m.mutable_graph(), "axis", test::int_tensor("", {}, {1}));
    set_int(add_node(m.mutable_graph(), "CumSum", {"x", "axis"}, {"y"}), "reverse", 2);
    check_refused(m, "CumSum_y", "reverse 2");
  }
  {
    onnx::ModelProto m = test::model_with_input({3, 4}, 14);
    auto* g = m.mutable_graph();
    add_node(g, "Shape", {"x"}, {"s"});
    constant(g, "i", test::int_tensor("", {}, {0}));
    add_node(g, "Gather", {"s", "i"}, {"axis"});
    add_node(g, "CumSum", {"x", "axis"}, {"y"});
    check_refused(m, "CumSum_y", "batch");
  }
}

namespace {

// Imports `m` with its input's shape as written (no batch axis: GatherElements' output has the constant
// indices' shape) and runs it on ref and cpu; `expect(x, i)` gives output element i.
void check_static(const onnx::ModelProto& m, int64_t in_numel, int64_t out_numel, const std::string& op,
                  const std::function<double(const float* x, int64_t i)>& expect) {
  convert::OnnxImportOptions o;
  o.static_input = true;
  Graph g;
  std::string log;
  Status st = convert::import_onnx(m, o, &g, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(ops_of(g).count(op) == 1);
  auto model = as_model(std::move(g));
  for (const std::string backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    auto s = test::make_session(model, backend, 1);
    std::vector<float> x(static_cast<size_t>(in_numel));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 1.7f * std::sin(0.61f * static_cast<float>(i) + 0.3f);
    REQUIRE(s->output_shape(1).numel() == out_numel);
    std::vector<float> y(static_cast<size_t>(out_numel), NAN);
    st = s->run(x.data(), 1, y.data(), y.size());
    REQUIRE_MESSAGE(st.ok(), st.message());
    for (int64_t i = 0; i < out_numel; ++i) {
      CAPTURE(i);
      CHECK(y[i] == static_cast<float>(expect(x.data(), i)));
    }
  }
}

// A model whose input x has exactly `dims` (imported with static_input).
onnx::ModelProto static_model(std::vector<int64_t> dims, int64_t opset) {
  onnx::ModelProto m = test::model_with_input({}, opset);
  auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return m;
}

}  // namespace

TEST_CASE(
    "GatherElements: constant indices on every axis (negative ones wrapped) become one GatherElements") {
  // x [3, 4, 5]; indices [2, 3, 6] on axis 2, [3, 2, 5] on axis 0, [3, 7, 2] on axis -2, values from a
  // formula in [-n, n).
  struct Case {
    int64_t axis;
    std::vector<int64_t> idx_shape;
  };
  const int64_t dims[] = {3, 4, 5};
  for (const Case& c : {Case{2, {2, 3, 6}}, Case{0, {3, 2, 5}}, Case{-2, {3, 7, 2}}}) {
    CAPTURE(c.axis);
    const int ax = static_cast<int>(c.axis < 0 ? c.axis + 3 : c.axis);
    const int64_t len = dims[ax];
    int64_t numel = 1;
    for (int64_t d : c.idx_shape) numel *= d;
    std::vector<int64_t> idx;
    for (int64_t e = 0; e < numel; ++e) idx.push_back((e * 7 + 3) % (2 * len) - len);  // in [-len, len)
    onnx::ModelProto m = static_model({3, 4, 5}, 13);
    auto* g = m.mutable_graph();
    *g->add_initializer() = test::int_tensor("idx", c.idx_shape, idx);
    set_int(add_node(g, "GatherElements", {"x", "idx"}, {"y"}), "axis", c.axis);
    check_static(m, 60, numel, "GatherElements", [&](const float* x, int64_t e) {
      int64_t coord[3], rest = e;
      for (int d = 2; d >= 0; --d) {
        coord[d] = rest % c.idx_shape[static_cast<size_t>(d)];
        rest /= c.idx_shape[static_cast<size_t>(d)];
      }
      const int64_t v = idx[static_cast<size_t>(e)];
      coord[ax] = v < 0 ? v + len : v;
      return double(x[(coord[0] * 4 + coord[1]) * 5 + coord[2]]);
    });
  }
}

TEST_CASE("GatherElements: an index out of range, computed indices or a batch-carrying input are refused") {
  {
    onnx::ModelProto m = static_model({3, 4}, 13);
    *m.mutable_graph()->add_initializer() = test::int_tensor("idx", {1, 2}, {0, 4});
    set_int(add_node(m.mutable_graph(), "GatherElements", {"x", "idx"}, {"y"}), "axis", 1);
    convert::OnnxImportOptions o;
    o.static_input = true;
    Graph g;
    std::string log;
    const Status st = convert::import_onnx(m, o, &g, &log);
    REQUIRE_FALSE(st.ok());
    CHECK_MESSAGE(st.message().find("GatherElements_y") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find("index 4 (element 1) is out of range") != std::string::npos,
                  st.message());
  }
  {
    onnx::ModelProto m = static_model({3, 4}, 13);
    *m.mutable_graph()->add_initializer() = test::int_tensor("idx", {1, 2}, {0, -5});
    add_node(m.mutable_graph(), "GatherElements", {"x", "idx"}, {"y"});
    convert::OnnxImportOptions o;
    o.static_input = true;
    Graph g;
    std::string log;
    const Status st = convert::import_onnx(m, o, &g, &log);
    REQUIRE_FALSE(st.ok());
    CHECK_MESSAGE(st.message().find("index -5") != std::string::npos, st.message());
  }
  {
    // indices computed from the data: vitrt computes in float32, indices must be constants.
    onnx::ModelProto m = test::model_with_input({3, 4}, 13);
    auto* g = m.mutable_graph();
    add_node(g, "ArgMax", {"x"}, {"am"});
    add_node(g, "GatherElements", {"x", "am"}, {"y"});
    check_refused(m, "GatherElements_y", "must be");
  }
  {
    onnx::ModelProto m = test::model_with_input({3, 4}, 13);
    *m.mutable_graph()->add_initializer() = test::int_tensor("idx", {1, 3, 4}, std::vector<int64_t>(12, 0));
    set_int(add_node(m.mutable_graph(), "GatherElements", {"x", "idx"}, {"y"}), "axis", 1);
    check_refused(m, "GatherElements_y", "depends on the batch");
  }
}

TEST_CASE("TopK: values and float32 indices along any axis, largest or smallest, sorted 0 or 1: one TopK") {
  struct Case {
    int64_t axis, k, largest, sorted;
    bool indices;  // the graph output is the indices (else the values)
  };
  for (const Case& c : {Case{-1, 2, 1, 1, false}, Case{-1, 2, 1, 1, true}, Case{1, 3, 0, 1, true},
                        Case{2, 6, 0, 0, false}, Case{1, 1, 1, 0, true}}) {
    CAPTURE(c.axis);
    CAPTURE(c.k);
    CAPTURE(c.largest);
    CAPTURE(c.indices);
    // x [B, 4, 6]; ties come from the input's rounding below.
    onnx::ModelProto m = test::model_with_input({4, 6}, 11);
    auto* g = m.mutable_graph();
    add_node(g, "Floor", {"x"}, {"r"});  // few distinct values: ties
    constant(g, "k", test::int_tensor("", {1}, {c.k}));
    auto* n = add_node(g, "TopK", {"r", "k"}, {c.indices ? "v" : "y", c.indices ? "y" : "i"});
    set_int(n, "axis", c.axis);
    set_int(n, "largest", c.largest);
    set_int(n, "sorted", c.sorted);
    const Graph ir = import_model(m);
    CHECK(ops_of(ir).count("TopK") == 1);
    const int ax = static_cast<int>(c.axis < 0 ? c.axis + 3 : c.axis);
    const int64_t dims[] = {1, 4, 6}, strides[] = {24, 6, 1};
    const int64_t out_numel = 24 / dims[ax] * c.k;
    check_values(ir, 24, out_numel, [&](const float* x, int64_t e) {
      // Output element e: position r along the axis of a k-long line; the line's start in the input.
      int64_t od[] = {1, 4, 6};
      od[ax] = c.k;
      const int64_t out_strides[] = {od[1] * od[2], od[2], 1};
      int64_t coord[3], rest = e;
      for (int d = 0; d < 3; ++d) {
        coord[d] = rest / out_strides[d];
        rest %= out_strides[d];
      }
      const int64_t r = coord[ax];
      coord[ax] = 0;
      const int64_t start = coord[1] * strides[1] + coord[2] * strides[2];
      std::vector<int64_t> order;
      for (int64_t j = 0; j < dims[ax]; ++j) order.push_back(j);
      auto v = [&](int64_t j) { return std::floor(x[start + j * strides[ax]]); };
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t p, int64_t q) { return c.largest ? v(p) > v(q) : v(p) < v(q); });
      return c.indices ? double(order[static_cast<size_t>(r)]) : double(v(order[static_cast<size_t>(r)]));
    });
  }
}

TEST_CASE("TopK: k computed, out of range or malformed, and bad flags are refused, naming the node") {
  auto top_k = [](std::vector<int64_t> k, int64_t largest = 1, bool computed = false) {
    onnx::ModelProto m = test::model_with_input({4, 6}, 11);
    auto* g = m.mutable_graph();
    if (computed) {
      add_node(g, "Shape", {"x"}, {"s"});
      constant(g, "i", test::int_tensor("", {1}, {0}));
      add_node(g, "Gather", {"s", "i"}, {"k"});
    } else {
      constant(g, "k", test::int_tensor("", {static_cast<int64_t>(k.size())}, k));
    }
    set_int(add_node(g, "TopK", {"x", "k"}, {"y", "i"}), "largest", largest);
    return m;
  };
  check_refused(top_k({7}), "TopK_y", "k 7 is not in [1, 6]");
  check_refused(top_k({0}), "TopK_y", "k 0 is not in [1, 6]");
  check_refused(top_k({1, 2}), "TopK_y", "k must be one integer");
  check_refused(top_k({2}, 3), "TopK_y", "largest 3");
  check_refused(top_k({}, 1, true), "TopK_y", "batch");
}
