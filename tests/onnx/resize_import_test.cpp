// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ONNX Resize on small hand-built graphs with a dynamic batch: which forms become the IR's Resize (and with
// which output lengths), which are removed as exact identities, which are refused naming the node; and what
// an imported Resize computes on ref and cpu at batch 1 and 3 against ONNX's formulas in double.
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

Status try_import(const onnx::ModelProto& m, Graph* g) {
  std::string log;
  return convert::import_onnx(m, convert::OnnxImportOptions{}, g, &log);
}

std::map<std::string, int> ops_of(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes) ++ops[op_type_name(n.type)];
  return ops;
}

void set_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void constant(onnx::GraphProto* g, const std::string& name, const onnx::TensorProto& t) {
  auto* n = add_node(g, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

// x [B, c, h, w] -> Resize (scales, or opset 18's sizes over `axes`) -> Relu -> y.
onnx::ModelProto resize_model(int64_t opset, std::vector<int64_t> chw, const std::vector<float>& scales,
                              const std::vector<int64_t>& sizes, const std::vector<int64_t>& axes,
                              const std::map<std::string, std::string>& strings = {}) {
  onnx::ModelProto m = test::model_with_input(chw, opset);
  auto* g = m.mutable_graph();
  std::vector<std::string> inputs = {"x", ""};
  if (!scales.empty()) {
    constant(g, "scales", test::float_tensor("", {static_cast<int64_t>(scales.size())}, scales));
    inputs.push_back("scales");
  } else {
    constant(g, "sizes", test::int_tensor("", {static_cast<int64_t>(sizes.size())}, sizes));
    inputs.insert(inputs.end(), {"", "sizes"});
  }
  auto* n = add_node(g, "Resize", inputs, {"r"});
  n->set_name("rs");
  for (const auto& [k, v] : strings) set_string(n, k, v);
  if (!axes.empty()) set_ints(n, "axes", axes);
  add_node(g, "Relu", {"r"}, {"y"});
  return m;
}

const ResizeAttrs& only_resize(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.type == OpType::kResize) return std::get<ResizeAttrs>(n.attrs);
  FAIL("no Resize");
  static ResizeAttrs none;
  return none;
}

std::shared_ptr<const Model> as_model(Graph g) {
  auto m = std::make_shared<Model>();
  m->graph = std::move(g);
  static const uint8_t kNoFile = 0;
  m->file = MappedFile::borrow(&kNoFile, 0);
  return m;
}

// ONNX's linear resize of one [h, w] plane in double (its reference: half_pixel or align_corners coordinates,
// the input's edge repeated outside), then Relu.
double onnx_bilinear(const float* x, int64_t h, int64_t w, int64_t oh, int64_t ow, double sh, double sw,
                     bool align, int64_t oy, int64_t ox) {
  auto coord = [&](int64_t o, int64_t n, int64_t out, double s) {
    if (align) return out > 1 ? static_cast<double>(o) * (n - 1) / (s * n - 1) : 0.0;
    return (o + 0.5) / s - 0.5;
  };
  auto taps = [](double c, int64_t n, int64_t* i0, int64_t* i1, double* f) {
    const double fl = std::floor(c);
    *f = c - fl;
    *i0 = std::min(std::max(static_cast<int64_t>(fl), int64_t{0}), n - 1);
    *i1 = std::min(std::max(static_cast<int64_t>(fl) + 1, int64_t{0}), n - 1);
  };
  int64_t y0, y1, x0, x1;
  double fy, fx;
  taps(coord(oy, h, oh, sh), h, &y0, &y1, &fy);
  taps(coord(ox, w, ow, sw), w, &x0, &x1, &fx);
  auto at = [&](int64_t yy, int64_t xx) { return static_cast<double>(x[yy * w + xx]); };
  const double v =
      (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) + fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1));
  return std::max(v, 0.0);
}

}  // namespace

TEST_CASE("Resize: scales (opset 13) and opset 18's sizes over axes become one Resize of the last axes") {
  struct Case {
    int64_t opset;
    std::vector<float> scales;
    std::vector<int64_t> sizes, axes;
    const char* coord;
    int64_t oh, ow;
  };
  const Case cases[] = {
      {13, {1, 1, 1.7f, 0.6f}, {}, {}, "half_pixel", 8, 6},  // non-integer scales, up and down
      {13, {1, 1, 2, 2}, {}, {}, "align_corners", 10, 22},   // torch's align_corners=True export
      {18, {}, {7, 13}, {2, 3}, "half_pixel", 7, 13},        // opset 18: sizes of the named axes
      {18, {}, {9}, {-1}, "pytorch_half_pixel", 5, 9},       // one axis, counted from the end
  };
  for (const Case& c : cases) {
    CAPTURE(c.opset);
    CAPTURE(c.coord);
    const int64_t ch = 3, h = 5, w = 11;
    onnx::ModelProto m = resize_model(c.opset, {ch, h, w}, c.scales, c.sizes, c.axes,
                                      {{"mode", "linear"}, {"coordinate_transformation_mode", c.coord}});
    Graph ir;
    Status st = try_import(m, &ir);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(ops_of(ir) == std::map<std::string, int>{{"Resize", 1}, {"Relu", 1}});
    const ResizeAttrs& a = only_resize(ir);
    // Only the trailing axes that change are resized: the last one alone where the height stays.
    const size_t k = a.sizes.size();
    REQUIRE(k == (c.oh == h ? 1u : 2u));
    CHECK(a.sizes[k - 1] == c.ow);
    if (k == 2) CHECK(a.sizes[0] == c.oh);
    const double sh = c.scales.empty() ? double(c.oh) / h : c.scales[2];
    const double sw = c.scales.empty() ? double(c.ow) / w : c.scales[3];
    const bool align = std::string(c.coord) == "align_corners";
    const int64_t in_plane = h * w, out_plane = c.oh * c.ow;
    auto model = as_model(std::move(ir));
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto s = test::make_session(model, backend, 3);
      for (int64_t batch : {1, 3}) {
        std::vector<float> x(static_cast<size_t>(ch * in_plane * batch));
        for (size_t i = 0; i < x.size(); ++i) x[i] = 1.7f * std::sin(0.61f * static_cast<float>(i) + 0.3f);
        std::vector<float> y(static_cast<size_t>(ch * out_plane * batch), NAN);
        st = s->run(x.data(), batch, y.data(), y.size());
        REQUIRE_MESSAGE(st.ok(), st.message());
        for (int64_t p = 0; p < ch * batch; ++p)
          for (int64_t i = 0; i < out_plane; ++i) {
            const double want =
                onnx_bilinear(x.data() + p * in_plane, h, w, c.oh, c.ow, sh, sw, align, i / c.ow, i % c.ow);
            CHECK(std::fabs(y[p * out_plane + i] - want) <= 2e-6 * (1 + std::fabs(want)));
          }
      }
    }
  }
}

TEST_CASE("Resize to the same size with an identity mapping is removed (exact)") {
  for (const char* coord : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"})
    for (const char* mode : {"nearest", "linear", "cubic"}) {
      CAPTURE(coord);
      CAPTURE(mode);
      Graph ir;
      Status st = try_import(resize_model(13, {3, 5, 7}, {1, 1, 1, 1}, {}, {},
                                          {{"mode", mode}, {"coordinate_transformation_mode", coord}}),
                             &ir);
      REQUIRE_MESSAGE(st.ok(), st.message());
      CHECK(ops_of(ir) == std::map<std::string, int>{{"Relu", 1}});
      st = try_import(resize_model(18, {3, 5, 7}, {}, {5, 7}, {2, 3}, {{"mode", mode}}), &ir);
      REQUIRE_MESSAGE(st.ok(), st.message());
    }
  // tf_half_pixel_for_nn moves every coordinate by half a pixel: not an identity.
  Graph ir;
  Status st = try_import(
      resize_model(13, {3, 5, 7}, {1, 1, 1, 1}, {}, {},
                   {{"coordinate_transformation_mode", "tf_half_pixel_for_nn"}, {"nearest_mode", "ceil"}}),
      &ir);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(ops_of(ir) == std::map<std::string, int>{{"Resize", 1}, {"Relu", 1}});
}

TEST_CASE("Resize forms the IR does not compute are refused naming the node and what is missing") {
  struct Case {
    onnx::ModelProto m;
    const char* needle;
  };
  onnx::ModelProto antialias = resize_model(18, {3, 8, 8}, {1, 1, 0.5f, 0.5f}, {}, {}, {{"mode", "linear"}});
  set_int(antialias.mutable_graph()->mutable_node(1), "antialias", 1);
  std::vector<Case> cases = {
      {std::move(antialias), "antialias 1"},
      {resize_model(13, {3, 8, 8}, {1, 1, 2, 2}, {}, {},
                    {{"coordinate_transformation_mode", "tf_crop_and_resize"}}),
       "tf_crop_and_resize"},
      {resize_model(13, {3, 8, 8}, {2, 1, 1, 1}, {}, {}), "resizes the batch axis"},
      {resize_model(18, {3, 8, 8}, {}, {4, 4}, {2, 3}, {{"keep_aspect_ratio_policy", "not_larger"}}),
       "keep_aspect_ratio_policy 'not_larger'"},
      {resize_model(13, {3, 8, 8}, {1, 1, 2}, {}, {}), "3 scales for 4 axes"},
      {resize_model(13, {3, 8, 8}, {1, 1, 2, 2}, {}, {}, {{"mode", "area"}}), "mode 'area'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.needle);
    Graph ir;
    const Status st = try_import(c.m, &ir);
    REQUIRE_FALSE(st.ok());
    CHECK_MESSAGE(st.message().find("'rs'") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find(c.needle) != std::string::npos, st.message());
  }
}
