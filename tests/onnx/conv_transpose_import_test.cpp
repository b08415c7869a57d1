// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The importer's ConvTranspose (converter/onnx/lower_conv_transpose.cpp): the IR it imports to
// (output_shape and auto_pad resolved into pads and output_padding by ONNX's formula; the 1-D form through
// Reshape), what it computes on ref and cpu at batch 1 and 3 against the definition evaluated in double, and
// the malformed attributes refused naming the node (also through vitrt-convert, exit 2).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
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

Graph import_model(const onnx::ModelProto& m) {
  Graph g;
  const Status st = try_import(m, &g);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return g;
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

// Runs the graph at batch 1 and 3 on ref and cpu; `expect(x, i)` gives output element i of one image from
// that image's input.
void check_values(const Graph& g, int64_t in_per_image, int64_t out_per_image,
                  const std::function<double(const float* x, int64_t i)>& expect, double tol = 1e-5) {
  auto m = std::make_shared<Model>();
  m->graph = g;
  static const uint8_t kNoFile = 0;
  m->file = MappedFile::borrow(&kNoFile, 0);
  std::shared_ptr<const Model> model = m;
  for (const std::string backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    auto s = test::make_session(model, backend, 3);
    for (int64_t batch : {1, 3}) {
      CAPTURE(batch);
      std::vector<float> x(static_cast<size_t>(in_per_image * batch));
      for (size_t i = 0; i < x.size(); ++i) x[i] = 1.7f * std::sin(0.61f * static_cast<float>(i) + 0.3f);
      REQUIRE(s->output_shape(batch).numel() == out_per_image * batch);
      std::vector<float> y(static_cast<size_t>(out_per_image * batch), NAN);
      const Status st = s->run(x.data(), batch, y.data(), y.size());
      REQUIRE_MESSAGE(st.ok(), st.message());
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < out_per_image; ++i) {
          const double want = expect(x.data() + b * in_per_image, i);
          CHECK_MESSAGE(std::fabs(y[b * out_per_image + i] - want) <= tol * (1 + std::fabs(want)), "element ",
                        i, ": ", y[b * out_per_image + i], " vs ", want);
        }
    }
  }
}

// ONNX ConvTranspose of one image in double, straight from its definition (scatter; pads crop the start
// and end, output_padding extends the end): x [cin, h, w], weight [cin, cout/group, kh, kw] -> [cout, ho,
// wo].
struct Geometry {
  int64_t cin, h, w, cout_g, kh, kw, group;
  int64_t sh, sw, dh, dw, pt, pl, pb, pr, oph, opw;
  int64_t ho() const { return (h - 1) * sh - pt - pb + (kh - 1) * dh + 1 + oph; }
  int64_t wo() const { return (w - 1) * sw - pl - pr + (kw - 1) * dw + 1 + opw; }
};

std::vector<double> conv_transpose_image(const Geometry& g, const float* x, const std::vector<float>& wt,
                                         const std::vector<float>& bias) {
  const int64_t cout = g.cout_g * g.group, ho = g.ho(), wo = g.wo(), cin_g = g.cin / g.group;
  std::vector<double> y(static_cast<size_t>(cout * ho * wo), 0.0);
  for (int64_t co = 0; co < cout; ++co)
    for (int64_t i = 0; i < ho * wo; ++i) y[co * ho * wo + i] = bias.empty() ? 0.0 : bias[co];
  for (int64_t ci = 0; ci < g.cin; ++ci)
    for (int64_t iy = 0; iy < g.h; ++iy)
      for (int64_t ix = 0; ix < g.w; ++ix)
        for (int64_t c = 0; c < g.cout_g; ++c)
          for (int64_t ky = 0; ky < g.kh; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t oy = iy * g.sh + ky * g.dh - g.pt, ox = ix * g.sw + kx * g.dw - g.pl;
              if (oy < 0 || oy >= ho || ox < 0 || ox >= wo) continue;
              const int64_t co = ci / cin_g * g.cout_g + c;
              y[(co * ho + oy) * wo + ox] += static_cast<double>(x[(ci * g.h + iy) * g.w + ix]) *
                                             wt[((ci * g.cout_g + c) * g.kh + ky) * g.kw + kx];
            }
  return y;
}

std::vector<float> pattern(int64_t n, float scale, float phase) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = scale * std::cos(0.37f * static_cast<float>(i) + phase);
  return v;
}

struct ConvTransposeModel {
  onnx::ModelProto m;
  onnx::NodeProto* node;
  std::vector<float> w, b;
};

// x [B, cin, spatial...] -> ConvTranspose (weight [cin, cout_g, kernel...]) -> y; add_bias adds a bias.
ConvTransposeModel conv_transpose_model(std::vector<int64_t> x_dims, std::vector<int64_t> w_dims,
                                        int64_t opset = 17) {
  ConvTransposeModel r;
  r.m = test::model_with_input(x_dims, opset);
  auto* g = r.m.mutable_graph();
  int64_t n = 1;
  for (int64_t d : w_dims) n *= d;
  r.w = pattern(n, 0.4f, 0.2f);
  *g->add_initializer() = test::float_tensor("w", w_dims, r.w);
  r.node = add_node(g, "ConvTranspose", {"x", "w"}, {"y"});
  return r;
}

void add_bias(ConvTransposeModel* r, int64_t cout) {
  r->b = pattern(cout, 0.3f, 1.1f);
  *r->m.mutable_graph()->add_initializer() = test::float_tensor("b", {cout}, r->b);
  r->node->add_input("b");
}

}  // namespace

TEST_CASE("ConvTranspose imports as the IR's ConvTranspose: pads, output_padding, dilations, groups") {
  // x [B,4,5,6], weight [4,3,3,2], group 2 -> 6 channels; strides 2x3, dilations 1x2, asymmetric pads,
  // output_padding 1x2.
  ConvTransposeModel r = conv_transpose_model({4, 5, 6}, {4, 3, 3, 2});
  add_bias(&r, 6);
  set_int(r.node, "group", 2);
  set_ints(r.node, "strides", {2, 3});
  set_ints(r.node, "dilations", {1, 2});
  set_ints(r.node, "pads", {1, 0, 2, 1});
  set_ints(r.node, "output_padding", {1, 2});
  set_ints(r.node, "kernel_shape", {3, 2});
  const Graph ir = import_model(r.m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"ConvTranspose", 1}});
  const auto& a = std::get<ConvTransposeAttrs>(ir.nodes[0].attrs);
  CHECK(a.groups == 2);
  CHECK(a.pad_top == 1);
  CHECK(a.pad_left == 0);
  CHECK(a.pad_bottom == 2);
  CHECK(a.pad_right == 1);
  CHECK(a.output_padding_h == 1);
  CHECK(a.output_padding_w == 2);
  const Geometry geo{4, 5, 6, 3, 3, 2, 2, 2, 3, 1, 2, 1, 0, 2, 1, 1, 2};
  const int64_t out = 6 * geo.ho() * geo.wo();
  check_values(ir, 4 * 5 * 6, out, [&](const float* x, int64_t i) {
    return conv_transpose_image(geo, x, r.w, r.b)[static_cast<size_t>(i)];
  });
}

TEST_CASE(
    "ConvTranspose: output_shape and auto_pad are resolved into pads and output_padding (ONNX's formula)") {
  struct Case {
    const char* what;
    std::string auto_pad;
    std::vector<int64_t> output_shape;
    int64_t pt, pl, pb, pr, oph, opw;
  };
  // x [B,2,4,5], weight [2,3,3,3], strides 2: the full output is 9 x 11.
  const Case cases[] = {
      {"output_shape cropping: the odd pad at the start", "NOTSET", {8, 10}, 1, 1, 0, 0, 0, 0},
      {"output_shape cropping 2 and 3", "NOTSET", {7, 8}, 1, 2, 1, 1, 0, 0},
      {"output_shape one larger: a zero row and column appended", "NOTSET", {10, 12}, 0, 0, 0, 0, 1, 1},
      {"output_shape with SAME_UPPER: the odd pad at the end", "SAME_UPPER", {8, 10}, 0, 0, 1, 1, 0, 0},
      {"SAME_UPPER: in·stride", "SAME_UPPER", {}, 0, 0, 1, 1, 0, 0},
      {"SAME_LOWER: in·stride", "SAME_LOWER", {}, 1, 1, 0, 0, 0, 0},
      {"VALID", "VALID", {}, 0, 0, 0, 0, 0, 0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    ConvTransposeModel r = conv_transpose_model({2, 4, 5}, {2, 3, 3, 3});
    set_ints(r.node, "strides", {2, 2});
    set_ints(r.node, "pads", {3, 3, 3, 3});  // ignored with output_shape or auto_pad (the spec)
    if (c.auto_pad != "NOTSET") set_string(r.node, "auto_pad", c.auto_pad);
    if (!c.output_shape.empty()) set_ints(r.node, "output_shape", c.output_shape);
    if (c.output_shape.empty() && c.auto_pad == "NOTSET") continue;
    const Graph ir = import_model(r.m);
    REQUIRE(ops_of(ir) == std::map<std::string, int>{{"ConvTranspose", 1}});
    const auto& a = std::get<ConvTransposeAttrs>(ir.nodes[0].attrs);
    CHECK(a.pad_top == c.pt);
    CHECK(a.pad_left == c.pl);
    CHECK(a.pad_bottom == c.pb);
    CHECK(a.pad_right == c.pr);
    CHECK(a.output_padding_h == c.oph);
    CHECK(a.output_padding_w == c.opw);
    const Geometry geo{2, 4, 5, 3, 3, 3, 1, 2, 2, 1, 1, c.pt, c.pl, c.pb, c.pr, c.oph, c.opw};
    if (!c.output_shape.empty()) {
      CHECK(geo.ho() == c.output_shape[0]);
      CHECK(geo.wo() == c.output_shape[1]);
    } else if (c.auto_pad != "VALID") {
      CHECK(geo.ho() == 8);
      CHECK(geo.wo() == 10);
    }
    check_values(ir, 2 * 4 * 5, 3 * geo.ho() * geo.wo(), [&](const float* x, int64_t i) {
      return conv_transpose_image(geo, x, r.w, r.b)[static_cast<size_t>(i)];
    });
  }
}

TEST_CASE("ConvTranspose over one spatial axis goes through Reshape [B,C,1,L]") {
  // x [B,3,7], weight [3,2,4], strides 3, pads 1/2, output_padding 2.
  ConvTransposeModel r = conv_transpose_model({3, 7}, {3, 2, 4});
  add_bias(&r, 2);
  set_ints(r.node, "strides", {3});
  set_ints(r.node, "pads", {1, 2});
  set_ints(r.node, "output_padding", {2});
  const Graph ir = import_model(r.m);
  CHECK(ops_of(ir) == std::map<std::string, int>{{"ConvTranspose", 1}, {"Reshape", 2}});
  const Geometry geo{3, 1, 7, 2, 1, 4, 1, 1, 3, 1, 1, 0, 1, 0, 2, 0, 2};
  CHECK(geo.wo() == 21);
  check_values(ir, 3 * 7, 2 * geo.wo(), [&](const float* x, int64_t i) {
    return conv_transpose_image(geo, x, r.w, r.b)[static_cast<size_t>(i)];
  });
}

TEST_CASE("ConvTranspose attributes that do not fit are refused naming the node") {
  struct Case {
    const char* what;
    std::vector<int64_t> x, w;
    std::function<void(onnx::NodeProto*)> set;
    StatusCode code;
    const char* needle;
  };
  const Case cases[] = {
      {"group not dividing the channels",
       {4, 5, 5},
       {4, 3, 3, 3},
       [](onnx::NodeProto* n) { set_int(n, "group", 3); },
       StatusCode::kBadInput,
       "group 3 does not divide the 4 input channels"},
      {"weight of the wrong rank",
       {4, 5, 5},
       {4, 3, 3},
       [](onnx::NodeProto*) {},
       StatusCode::kBadInput,
       "must be [C_in, C_out/group, kH, kW]"},
      {"weight not starting with the input channels",
       {4, 5, 5},
       {2, 3, 3, 3},
       [](onnx::NodeProto*) {},
       StatusCode::kBadInput,
       "must start with the 4 input channels"},
      {"output_shape of the wrong length",
       {4, 5, 5},
       {4, 3, 3, 3},
       [](onnx::NodeProto* n) {
         set_ints(n, "output_shape", {1, 4, 9, 9});
       },
       StatusCode::kBadInput,
       "must give the 2 spatial sizes"},
      {"output_shape of size 0",
       {4, 5, 5},
       {4, 3, 3, 3},
       [](onnx::NodeProto* n) {
         set_ints(n, "output_shape", {0, 7});
       },
       StatusCode::kBadInput,
       "holds a size below 1"},
      {"output_shape asking for zeros before the output",
       {4, 5, 5},
       {4, 3, 3, 3},
       [](onnx::NodeProto* n) {
         set_ints(n, "output_shape", {9, 9});
       },
       StatusCode::kUnsupported,
       "larger than the full transposed convolution"},
      {"kernel_shape differing from the weight",
       {4, 5, 5},
       {4, 3, 3, 3},
       [](onnx::NodeProto* n) {
         set_ints(n, "kernel_shape", {3, 2});
       },
       StatusCode::kBadInput,
       "kernel_shape [3,2] differs"},
      {"pads cropping everything",
       {4, 2, 2},
       {4, 3, 1, 1},
       [](onnx::NodeProto* n) {
         set_ints(n, "pads", {1, 0, 1, 0});
       },
       StatusCode::kBadInput,
       "gives no output"},
      {"a negative output_padding",
       {4, 5, 5},
       {4, 3, 3, 3},
       [](onnx::NodeProto* n) {
         set_ints(n, "output_padding", {0, -1});
       },
       StatusCode::kBadInput,
       "output_padding not in [0, 2^31)"},
      {"unknown auto_pad",
       {4, 5, 5},
       {4, 3, 3, 3},
       [](onnx::NodeProto* n) { set_string(n, "auto_pad", "SAME"); },
       StatusCode::kBadInput,
       "unknown auto_pad 'SAME'"},
      {"a full length past int64 (2^32 positions, strides and dilations 2^31 - 1)",
       {1, int64_t{1} << 32},
       {1, 1, 4},
       [](onnx::NodeProto* n) {
         set_ints(n, "strides", {INT32_MAX});
         set_ints(n, "dilations", {INT32_MAX});
         set_ints(n, "output_padding", {INT32_MAX});
         set_ints(n, "output_shape", {1});
       },
       StatusCode::kBadInput,
       "length along spatial axis 0 (input [B,1,4294967296]) overflows int64"},
      {"output_shape needing pads past 2^31",
       {4, 5, 5},
       {4, 3, 3, 3},
       [](onnx::NodeProto* n) {
         set_ints(n, "strides", {INT32_MAX, 1});
         set_ints(n, "output_shape", {1, 7});
       },
       StatusCode::kBadInput,
       "output_shape [1,7] needs pads [4294967295,0,4294967295,0], beyond 2^31"},
      {"3-D",
       {4, 3, 5, 5},
       {4, 3, 3, 3, 3},
       [](onnx::NodeProto*) {},
       StatusCode::kUnsupported,
       "3-D transposed convolution"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    ConvTransposeModel r = conv_transpose_model(c.x, c.w);
    r.node->set_name("up1");
    c.set(r.node);
    Graph g;
    const Status st = try_import(r.m, &g);
    CHECK(st.code() == c.code);
    CHECK_MESSAGE(st.message().find(c.needle) != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find("node 'up1' (ConvTranspose") != std::string::npos, st.message());
  }
}

TEST_CASE("vitrt-convert exits 2 on a ConvTranspose whose group does not divide the channels") {
  ConvTransposeModel r = conv_transpose_model({3, 8, 8}, {3, 1, 2, 2});
  r.node->set_name("decoder.up");
  set_int(r.node, "group", 2);
  char tmpl[] = "/tmp/vitrt-convt-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  const std::filesystem::path dir = tmpl;
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    f << r.m.SerializeAsString();
  }
  const std::string bin = test::env_or("VITRT_BINARY_DIR", ".") + "/bin/vitrt-convert";
  REQUIRE_MESSAGE(std::filesystem::exists(bin), bin << " is not built");
  const std::string cmd = "'" + bin + "' '" + (dir / "model.onnx").string() + "' -o '" +
                          (dir / "out.vitrt").string() + "' >/dev/null 2>'" + (dir / "err.log").string() +
                          "'";
  const int rc = std::system(cmd.c_str());
  std::ifstream f(dir / "err.log");
  std::stringstream ss;
  ss << f.rdbuf();
  CAPTURE(ss.str());
  CHECK(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 2);
  CHECK(ss.str().find(
            "node 'decoder.up' (ConvTranspose, opset 17): group 2 does not divide the 3 input channels") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(dir / "out.vitrt"));
  std::filesystem::remove_all(dir);
}
