// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Crafted model files that every earlier check let through: sizes that overflow in shape inference, a padding
// whose int32 doubling changed the output size, graphs `run` cannot honestly serve, and plans larger than the
// session may allocate. Each is refused at load (or session creation) with a message naming the op or tensor.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "file_checksum.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"
#include "unit/model_bytes.h"
#include "unit/test_graphs.h"
#include "vitrt.h"
#include "vitrt_generated.h"

using namespace vitrt;

namespace {

Status load_bytes(const std::vector<uint8_t>& b, std::shared_ptr<const Model>* out = nullptr) {
  return test::load_model_bytes(b, out);
}

std::vector<uint8_t> bytes_of(const Graph& g) {
  std::vector<uint8_t> b;
  REQUIRE(write_model_memory(g, &b).ok());
  return b;
}

std::vector<uint8_t> edited(std::vector<uint8_t> b, const std::function<void(fb::Model*)>& edit) {
  return test::edited_model_bytes(std::move(b), edit);
}

void expect_refused(const std::vector<uint8_t>& b, const char* fragment) {
  Status st = load_bytes(b);
  CHECK_FALSE(st.ok());
  CHECK(st.code() == StatusCode::kBadModel);
  CHECK_MESSAGE(st.message().find(fragment) != std::string::npos, "message: " << st.message());
}

// image [B,3,8,8] -> `body` (which returns its output tensor) -> Reshape [B,-1] -> Linear -> logits [B,K].
// Writing does no shape inference, so the writer stores whatever the body declares.
Graph image_graph(const std::function<int32_t(Graph&, int32_t)>& body, int64_t head_in, int64_t classes = 4) {
  Graph g;
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, 8, 8});
  g.inputs = {x};
  const int32_t y = body(g, x);
  const int32_t flat = g.add_activation("flat", Shape());
  g.add_node(OpType::kReshape, ReshapeAttrs{{0, -1}}, {y}, {flat}, "flatten");
  const int32_t logits = g.add_activation("logits", Shape());
  const Shape ws{classes, head_in};
  g.add_node(OpType::kLinear, LinearAttrs{},
             {flat, g.add_constant("head.w", ws, test::pseudo_random(ws.numel(), 3)), kAbsent}, {logits},
             "head");
  g.outputs = {logits};
  g.metadata.preprocess.resize_shorter = 8;
  g.metadata.preprocess.crop_h = g.metadata.preprocess.crop_w = 8;
  return g;
}

}  // namespace

TEST_CASE("hostile model: a Reshape whose target product wraps modulo 2^64 is refused, naming the op") {
  // [1,3,8,8] (192 elements) -> [B, 2^62+48, 4]: (2^62+48)*4 = 2^64+192, which wrapped to exactly the element
  // count at every batch, so the old check `numel == total` passed and Softmax ran over 2^62 rows.
  const int64_t huge = (int64_t{1} << 62) + 48;
  Graph g = image_graph(
      [&](Graph& gr, int32_t x) {
        const int32_t r = gr.add_activation("wrapped", Shape());
        gr.add_node(OpType::kReshape, ReshapeAttrs{{0, huge, 4}}, {x}, {r}, "wrap");
        const int32_t s = gr.add_activation("soft", Shape());
        gr.add_node(OpType::kSoftmax, SoftmaxAttrs{-1}, {r}, {s}, "softmax");
        return s;
      },
      192);
  expect_refused(bytes_of(g), "Reshape");
  expect_refused(bytes_of(g), "'wrap'");
}

TEST_CASE(
    "hostile model: AdaptiveAvgPool2d to (2^31-1)^2 is refused instead of getting a 0-byte arena slot") {
  Graph g = image_graph(
      [](Graph& gr, int32_t x) {
        const int32_t p = gr.add_activation("pooled", Shape());
        gr.add_node(OpType::kAdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{2147483647, 2147483647}, {x}, {p},
                    "pool");
        return p;
      },
      3);
  expect_refused(bytes_of(g), "AdaptiveAvgPool2d");
  expect_refused(bytes_of(g), "per-tensor limit");
}

TEST_CASE("hostile model: any op output above the per-tensor limit is refused at load, every batch") {
  // 2^16 x 2^16 per channel is 3 * 2^32 elements: no overflow anywhere, only the limit.
  Graph g = image_graph(
      [](Graph& gr, int32_t x) {
        const int32_t p = gr.add_activation("pooled", Shape());
        gr.add_node(OpType::kAdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{65536, 65536}, {x}, {p}, "pool");
        return p;
      },
      3);
  expect_refused(bytes_of(g), "per-tensor limit");
}

TEST_CASE("hostile model: Conv2d padding near INT32_MAX gives the true output size, not a wrapped one") {
  // pad = stride = 2^31-1 on an 8x8 image with a 4x4 kernel: PyTorch gives 3x3 (row 1 starts at padded row
  // 2^31-1, the first image row). `2 * pad` in int32 wrapped to -2 and gave 1x1, a map that ignored the
  // image.
  Graph g = image_graph(
      [](Graph& gr, int32_t x) {
        const int32_t c = gr.add_activation("conv", Shape());
        Conv2dAttrs a;
        a.stride_h = a.stride_w = a.pad_h = a.pad_w = 2147483647;
        gr.add_node(OpType::kConv2d, a,
                    {x, gr.add_constant("c.w", Shape{2, 3, 4, 4}, test::pseudo_random(96, 1)), kAbsent}, {c},
                    "conv");
        return c;
      },
      2 * 3 * 3);
  std::shared_ptr<const Model> m;
  Status st = load_bytes(bytes_of(g), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const Graph& lg = m->graph;
  CHECK(lg.tensors[lg.nodes[0].outputs[0]].shape == Shape{kDynamicDim, 2, 3, 3});
  // And the logits depend on the image (the centre output pixel sees image rows and columns 0..3).
  SessionOptions so;
  so.backend = "ref";
  std::unique_ptr<Session> s;
  REQUIRE(Session::create(m, so, &s).ok());
  std::vector<float> img(192, 0.0f), out0(4), out1(4);
  REQUIRE(s->run(img.data(), 1, out0.data(), out0.size()).ok());
  img[0] = 1.0f;
  REQUIRE(s->run(img.data(), 1, out1.data(), out1.size()).ok());
  CHECK(out0 != out1);
}

TEST_CASE("hostile model: Conv2d padding that would hold more than the limit is refused, naming the op") {
  Graph g = image_graph(
      [](Graph& gr, int32_t x) {
        const int32_t c = gr.add_activation("conv", Shape());
        Conv2dAttrs a;
        a.pad_h = a.pad_w = 1073741824;  // 2^30: 2*pad overflowed int32 to INT32_MIN
        gr.add_node(OpType::kConv2d, a,
                    {x, gr.add_constant("c.w", Shape{2, 3, 4, 4}, test::pseudo_random(96, 1)), kAbsent}, {c},
                    "conv");
        return c;
      },
      2);
  expect_refused(bytes_of(g), "Conv2d");
}

TEST_CASE("hostile model: a Conv2d activation past HARD_SWISH (5) is refused; SILU and HARD_SWISH load") {
  auto conv_graph = [](Activation act) {
    return image_graph(
        [act](Graph& gr, int32_t x) {
          const int32_t c = gr.add_activation("conv", Shape());
          Conv2dAttrs a;
          a.activation = act;
          gr.add_node(OpType::kConv2d, a,
                      {x, gr.add_constant("c.w", Shape{2, 3, 4, 4}, test::pseudo_random(96, 1)), kAbsent},
                      {c}, "conv");
          return c;
        },
        2 * 5 * 5);
  };
  for (Activation act : {Activation::kSilu, Activation::kHardSwish, Activation::kRelu6}) {
    std::shared_ptr<const Model> m;
    Status st = load_bytes(bytes_of(conv_graph(act)), &m);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK(std::get<Conv2dAttrs>(m->graph.nodes[0].attrs).activation == act);
  }
  for (int bad : {7, 127, -1}) {
    const std::vector<uint8_t> b = edited(bytes_of(conv_graph(Activation::kHardSwish)), [&](fb::Model* mm) {
      auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(0);
      REQUIRE(op->options_type() == fb::OpOptions::Conv2dOptions);
      REQUIRE(static_cast<fb::Conv2dOptions*>(op->mutable_options())
                  ->mutate_activation(static_cast<fb::Activation>(bad)));
    });
    expect_refused(b, "'conv'");
    expect_refused(b, "invalid value of option 'activation'");
  }
}

TEST_CASE("hostile model: a Conv2d with a residual input (the planner's, never a file's) is refused") {
  // Passes that run before fuse_epilogue (squeeze-excite, selective kernel, channels-last stem) would drop
  // the residual or read it in the wrong layout; the loader refuses it instead.
  Graph g = image_graph(
      [](Graph& gr, int32_t x) {
        const int32_t w = gr.add_constant("c.w", Shape{2, 3, 4, 4}, test::pseudo_random(96, 1));
        const int32_t a = gr.add_activation("a", Shape());
        gr.add_node(OpType::kConv2d, Conv2dAttrs{}, {x, w, kAbsent}, {a}, "conv1");
        const int32_t c = gr.add_activation("conv", Shape());
        gr.add_node(OpType::kConv2d, Conv2dAttrs{}, {x, w, kAbsent, a}, {c}, "conv2");
        return c;
      },
      2 * 5 * 5);
  expect_refused(bytes_of(g), "'conv2'");
  expect_refused(bytes_of(g), "residual input is set by the planner only");
}

TEST_CASE("hostile model: Pool2d windows, strides and pads near INT32_MAX give the true output size") {
  // An 8x8 image, window = stride = 2^31-1, every pad 2^31-2 (one less than the window, the largest allowed):
  // rows [-(2^31-2), 0] and [1, 2^31-1] make a 2x2 output whose cells are the max of {0} x {0}, {0} x [1,8),
  // [1,8) x {0} and [1,8) x [1,8). Sums like in + 2·pad overflow int32.
  const int32_t big = 2147483647;
  Graph g = image_graph(
      [&](Graph& gr, int32_t x) {
        const int32_t p = gr.add_activation("pooled", Shape());
        Pool2dAttrs a;
        a.kernel_h = a.kernel_w = a.stride_h = a.stride_w = big;
        a.pad_top = a.pad_left = a.pad_bottom = a.pad_right = big - 1;
        gr.add_node(OpType::kPool2d, a, {x}, {p}, "pool");
        return p;
      },
      3 * 2 * 2);
  std::shared_ptr<const Model> m;
  Status st = load_bytes(bytes_of(g), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(m->graph.tensors[m->graph.nodes[0].outputs[0]].shape == Shape{kDynamicDim, 3, 2, 2});
  SessionOptions so;
  so.backend = "ref";
  so.preserve_intermediates = true;
  std::unique_ptr<Session> s;
  REQUIRE(Session::create(m, so, &s).ok());
  std::vector<float> img(192), logits(4);
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>((i * 37) % 101);
  REQUIRE(s->run(img.data(), 1, logits.data(), logits.size()).ok());
  int32_t pooled = -1;
  for (size_t t = 0; t < s->graph().tensors.size(); ++t)
    if (s->graph().tensors[t].name == "pooled") pooled = static_cast<int32_t>(t);
  REQUIRE(pooled >= 0);
  const float* y = s->tensor_data(pooled);
  REQUIRE(y != nullptr);
  for (int c = 0; c < 3; ++c) {
    const float* plane = img.data() + c * 64;
    float want[4] = {plane[0], plane[1], plane[8], plane[9]};
    for (int r = 0; r < 8; ++r)
      for (int col = 0; col < 8; ++col) {
        float& cell = want[(r > 0) * 2 + (col > 0)];
        cell = std::max(cell, plane[r * 8 + col]);
      }
    for (int k = 0; k < 4; ++k) CHECK(y[c * 4 + k] == want[k]);
  }
}

TEST_CASE("hostile model: Pool2d attributes that make no valid window are refused at load, naming the op") {
  auto pool_graph = [](const Pool2dAttrs& a) {
    return image_graph(
        [&](Graph& gr, int32_t x) {
          const int32_t p = gr.add_activation("pooled", Shape());
          gr.add_node(OpType::kPool2d, a, {x}, {p}, "pool");
          return p;
        },
        3);
  };
  Pool2dAttrs good;
  good.kind = PoolKind::kAverage;
  good.kernel_h = good.kernel_w = good.stride_h = good.stride_w = 8;
  REQUIRE(load_bytes(bytes_of(pool_graph(good))).ok());
  const std::vector<std::pair<std::function<void(Pool2dAttrs&)>, const char*>> bad = {
      {[](Pool2dAttrs& a) { a.kernel_h = 0; }, "must be positive"},
      {[](Pool2dAttrs& a) { a.kernel_w = -8; }, "must be positive"},
      {[](Pool2dAttrs& a) { a.stride_w = -1; }, "must be positive"},
      {[](Pool2dAttrs& a) { a.stride_h = 0; }, "must be positive"},
      {[](Pool2dAttrs& a) { a.dilation_h = 0; }, "must be positive"},
      {[](Pool2dAttrs& a) { a.pad_left = -1; }, "non-negative"},
      {[](Pool2dAttrs& a) { a.pad_bottom = INT32_MIN; }, "non-negative"},
      {[](Pool2dAttrs& a) { a.pad_top = 8; }, "smaller than the window"},
      {[](Pool2dAttrs& a) { a.pad_right = 2147483647; }, "smaller than the window"},
      {[](Pool2dAttrs& a) { a.dilation_w = 2; }, "no dilation"},
      {[](Pool2dAttrs& a) { a.kernel_h = 9; }, "does not fit input"},
      {[](Pool2dAttrs& a) {
         a.kind = PoolKind::kMax;
         a.kernel_w = 5;
         a.dilation_w = 2147483647;
       },
       "does not fit input"},
  };
  for (const auto& [edit, why] : bad) {
    Pool2dAttrs a = good;
    edit(a);
    const std::vector<uint8_t> b = bytes_of(pool_graph(a));
    expect_refused(b, "Pool2d");
    expect_refused(b, "'pool'");
    expect_refused(b, why);
  }
  // A pooling kind this build does not know.
  expect_refused(edited(bytes_of(pool_graph(good)),
                        [](fb::Model* m) {
                          auto* op = m->mutable_graph()->mutable_operators()->GetMutableObject(0);
                          REQUIRE(op->options_type() == fb::OpOptions::Pool2dOptions);
                          auto* o = static_cast<fb::Pool2dOptions*>(op->mutable_options());
                          REQUIRE(o->mutate_kind(static_cast<fb::PoolKind>(9)));
                        }),
                 "invalid value of option 'kind'");
}

namespace {

// image [B,3,8,8] -> one node of `type` (reading the image, plus `extra` constants of shape [1,1,8,8]) ->
// head; `version` is the node's op version. head_in: elements of the node's output per image.
Graph one_op_graph(OpType type, const OpAttrs& attrs, int64_t head_in, int extra = 0, int32_t version = 1) {
  return image_graph(
      [&](Graph& gr, int32_t x) {
        std::vector<int32_t> ins = {x};
        for (int i = 0; i < extra; ++i)
          ins.push_back(gr.add_constant("c" + std::to_string(i), Shape{1, 1, 8, 8},
                                        test::pseudo_random(64, static_cast<uint32_t>(7 + i))));
        const int32_t y = gr.add_activation("op_out", Shape());
        gr.add_node(type, attrs, ins, {y}, "data_op");
        gr.nodes.back().version = version;
        return y;
      },
      head_in);
}

// Runs a loaded model on `img` (one image) on ref and returns the node "data_op"'s output.
std::vector<float> run_data_op(const std::shared_ptr<const Model>& m, const std::vector<float>& img) {
  SessionOptions so;
  so.backend = "ref";
  so.preserve_intermediates = true;
  std::unique_ptr<Session> s;
  Status st = Session::create(m, so, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  std::vector<float> logits(4);
  REQUIRE(s->run(img.data(), 1, logits.data(), logits.size()).ok());
  for (size_t t = 0; t < s->graph().tensors.size(); ++t)
    if (s->graph().tensors[t].name == "op_out") {
      const float* y = s->tensor_data(static_cast<int32_t>(t));
      REQUIRE(y != nullptr);
      return std::vector<float>(y, y + s->tensor_shape(static_cast<int32_t>(t)).numel());
    }
  FAIL("no op_out");
  return {};
}

std::vector<float> test_image() {
  std::vector<float> img(192);
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>((i * 37) % 101);
  return img;
}

}  // namespace

TEST_CASE("hostile model: a Slice step round-trips as version 2; every step a file can hold is safe") {
  const std::vector<float> img = test_image();
  // Rows reversed (x[:, :, ::-1]): version 2, the step survives the file.
  std::shared_ptr<const Model> m;
  Status st =
      load_bytes(bytes_of(one_op_graph(OpType::kSlice, SliceAttrs{2, -1, INT64_MIN, -1}, 192, 0, 2)), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(m->graph.nodes[0].version == 2);
  CHECK(std::get<SliceAttrs>(m->graph.nodes[0].attrs).step == -1);
  std::vector<float> y = run_data_op(m, img);
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 8; ++r)
      for (int k = 0; k < 8; ++k) CHECK(y[(c * 8 + r) * 8 + k] == img[(c * 8 + 7 - r) * 8 + k]);
  // Steps near the int64 limits take one element, without overflow: x[:, :, 5::INT64_MAX] and
  // x[:, :, 6::-(INT64_MAX)].
  for (const SliceAttrs& a :
       {SliceAttrs{2, 5, INT64_MAX, INT64_MAX}, SliceAttrs{2, 6, INT64_MIN, -INT64_MAX}}) {
    st = load_bytes(bytes_of(one_op_graph(OpType::kSlice, a, 24, 0, 2)), &m);
    REQUIRE_MESSAGE(st.ok(), st.message());
    y = run_data_op(m, img);
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 8; ++k) CHECK(y[c * 8 + k] == img[(c * 8 + a.start) * 8 + k]);
  }
  const std::vector<std::pair<std::pair<SliceAttrs, int32_t>, const char*>> bad = {
      {{SliceAttrs{2, 0, 8, 2}, 1}, "needs op version 2"},  // an older writer's file cannot mean a step
      {{SliceAttrs{2, 0, 8, 0}, 2}, "step 0"},
      {{SliceAttrs{2, 0, 8, INT64_MIN}, 2}, "step -9223372036854775808"},
      {{SliceAttrs{2, 0, 0, 1}, 1}, "empty range"},
      {{SliceAttrs{2, 0, 7, -1}, 2}, "empty range"},
      {{SliceAttrs{2, INT64_MIN, INT64_MIN, -3}, 2}, "empty range"},
  };
  for (const auto& [spec, why] : bad) {
    const std::vector<uint8_t> b = bytes_of(one_op_graph(OpType::kSlice, spec.first, 96, 0, spec.second));
    expect_refused(b, "Slice");
    expect_refused(b, "'data_op'");
    expect_refused(b, why);
  }
  // A version-1 file edited to carry a step is refused too.
  expect_refused(edited(bytes_of(one_op_graph(OpType::kSlice, SliceAttrs{2, 0, 4}, 96)),
                        [](fb::Model* mm) {
                          auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(0);
                          REQUIRE(op->options_type() == fb::OpOptions::SliceOptions);
                          REQUIRE(static_cast<fb::SliceOptions*>(op->mutable_options())->mutate_step(3));
                        }),
                 "needs op version 2");
  // A version this build does not know.
  Status v3 = load_bytes(bytes_of(one_op_graph(OpType::kSlice, SliceAttrs{2, 0, 4}, 96, 0, 3)));
  CHECK(v3.code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(v3.message().find("Slice version 3") != std::string::npos, v3.message());
}

TEST_CASE(
    "hostile model: Compare, Where, Pad and Expand round-trip and refuse invalid attributes, naming the op") {
  const std::vector<float> img = test_image();
  std::shared_ptr<const Model> m;
  Status st;
  // Round trips with their values.
  REQUIRE(
      load_bytes(bytes_of(one_op_graph(OpType::kCompare, CompareAttrs{CompareKind::kGreaterOrEqual}, 192, 1)),
                 &m)
          .ok());
  CHECK(std::get<CompareAttrs>(m->graph.nodes[0].attrs).kind == CompareKind::kGreaterOrEqual);
  const std::vector<float> c0 = test::pseudo_random(64, 7);
  std::vector<float> y = run_data_op(m, img);
  for (int i = 0; i < 192; ++i) CHECK(y[i] == (img[i] >= c0[i % 64] ? 1.0f : 0.0f));
  REQUIRE(load_bytes(bytes_of(one_op_graph(OpType::kWhere, NoAttrs{}, 192, 2)), &m).ok());
  const std::vector<float> c1 = test::pseudo_random(64, 8);
  y = run_data_op(m, img);
  for (int i = 0; i < 192; ++i) CHECK(y[i] == (img[i] != 0 ? c0[i % 64] : c1[i % 64]));
  const PadAttrs pad{PadMode::kReflect, {0, 0, 1, 7, 0, 0, 2, 0}, 0.0f};
  REQUIRE(load_bytes(bytes_of(one_op_graph(OpType::kPad, pad, 3 * 11 * 15)), &m).ok());
  const auto& pa = std::get<PadAttrs>(m->graph.nodes[0].attrs);
  CHECK((pa.mode == pad.mode && pa.pads == pad.pads));
  y = run_data_op(m, img);
  auto reflect = [](int64_t i, int64_t n) { return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i); };
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 11; ++r)
      for (int k = 0; k < 15; ++k)
        CHECK(y[(c * 11 + r) * 15 + k] == img[(c * 8 + reflect(r - 1, 8)) * 8 + reflect(k - 7, 8)]);
  // Expand needs a size-1 axis: a Slice to one row first, then [B,3,1,8] -> [B,3,5,8].
  Graph expand = image_graph(
      [](Graph& gr, int32_t x) {
        const int32_t row = gr.add_activation("row", Shape());
        gr.add_node(OpType::kSlice, SliceAttrs{2, 6, 7}, {x}, {row}, "row");
        const int32_t y = gr.add_activation("op_out", Shape());
        gr.add_node(OpType::kExpand, ExpandAttrs{{5, 1}}, {row}, {y}, "data_op");
        return y;
      },
      120);
  st = load_bytes(bytes_of(expand), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(std::get<ExpandAttrs>(m->graph.nodes[1].attrs).shape == std::vector<int64_t>{5, 1});
  y = run_data_op(m, img);
  for (int i = 0; i < 120; ++i) CHECK(y[i] == img[(i / 40) * 64 + 6 * 8 + i % 8]);

  const int64_t big = INT64_MAX;
  const std::vector<std::pair<Graph, const char*>> bad = {
      {one_op_graph(OpType::kPad, PadAttrs{PadMode::kConstant, {0, 0, 1, 1}, 0.0f}, 3), "4 pads"},
      {one_op_graph(OpType::kPad, PadAttrs{PadMode::kConstant, {0, 0, -1, 0, 0, 0, 0, 0}, 0.0f}, 3),
       "non-negative"},
      {one_op_graph(OpType::kPad, PadAttrs{PadMode::kReflect, {0, 0, 8, 0, 0, 0, 0, 0}, 0.0f}, 3),
       "smaller than its size"},
      {one_op_graph(OpType::kPad, PadAttrs{PadMode::kEdge, {0, 0, big, 0, 0, 0, big, 0}, 0.0f}, 3),
       "overflows"},
      {one_op_graph(OpType::kPad, PadAttrs{PadMode::kConstant, {0, 0, 1 << 30, 0, 0, 0, 1 << 30, 0}, 0.0f},
                    3),
       "per-tensor limit"},
      {one_op_graph(OpType::kExpand, ExpandAttrs{{1, 1, 0, 1}}, 3), "must be at least 1"},
      {one_op_graph(OpType::kExpand, ExpandAttrs{{1, 1, 3, 1}}, 3), "does not broadcast"},
      {one_op_graph(OpType::kExpand, ExpandAttrs{std::vector<int64_t>(9, 1)}, 3), "rank 9"},
  };
  for (const auto& [g, why] : bad) {
    const std::vector<uint8_t> b = bytes_of(g);
    expect_refused(b, op_type_name(g.nodes[0].type));
    expect_refused(b, "'data_op'");
    expect_refused(b, why);
  }
  // Enum values this build does not know.
  expect_refused(edited(bytes_of(one_op_graph(OpType::kCompare, CompareAttrs{}, 192, 1)),
                        [](fb::Model* mm) {
                          auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(0);
                          REQUIRE(static_cast<fb::CompareOptions*>(op->mutable_options())
                                      ->mutate_kind(static_cast<fb::CompareKind>(6)));
                        }),
                 "invalid value of option 'kind'");
  expect_refused(edited(bytes_of(one_op_graph(
                            OpType::kPad, PadAttrs{PadMode::kEdge, std::vector<int64_t>(8, 0), 0.0f}, 192)),
                        [](fb::Model* mm) {
                          auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(0);
                          REQUIRE(static_cast<fb::PadOptions*>(op->mutable_options())
                                      ->mutate_mode(static_cast<fb::PadMode>(-1)));
                        }),
                 "invalid value of option 'mode'");
  // Where's inputs must broadcast.
  Graph where_bad = image_graph(
      [](Graph& gr, int32_t x) {
        const int32_t c = gr.add_constant("c", Shape{1, 2, 1, 1}, {1.0f, 0.0f});
        const int32_t y = gr.add_activation("op_out", Shape());
        gr.add_node(OpType::kWhere, NoAttrs{}, {c, x, x}, {y}, "data_op");
        return y;
      },
      192);
  expect_refused(bytes_of(where_bad), "do not broadcast");
}

namespace {

// image [B,3,8,8] -> SqueezeExcite (C = 3, Cr = 2; fc1 as Linear [2,3], fc2 as a 1x1 conv [3,2,1,1], weight
// shapes as given) -> head.
Graph squeeze_excite_graph(const SqueezeExciteAttrs& a, const Shape& w1 = Shape{2, 3},
                           const Shape& w2 = Shape{3, 2, 1, 1}) {
  return image_graph(
      [&](Graph& gr, int32_t x) {
        const int32_t y = gr.add_activation("op_out", Shape());
        gr.add_node(OpType::kSqueezeExcite, a,
                    {x, gr.add_constant("fc1.w", w1, test::pseudo_random(w1.numel(), 21, 0.05f)),
                     gr.add_constant("fc1.b", Shape{2}, {0.25f, -0.5f}),
                     gr.add_constant("fc2.w", w2, test::pseudo_random(w2.numel(), 22)),
                     gr.add_constant("fc2.b", Shape{3}, {0.5f, -1.0f, 0.125f})},
                    {y}, "data_op");
        return y;
      },
      192);
}

}  // namespace

TEST_CASE(
    "hostile model: SqueezeExcite round-trips with its values and refuses invalid attributes, naming it") {
  SqueezeExciteAttrs hard;
  hard.activation = SqueezeActivation::kSilu;
  hard.gate = ExciteGate::kHardSigmoid;
  hard.gate_alpha = 1.0f / 6.0f;
  hard.gate_beta = 0.5f;
  std::shared_ptr<const Model> m;
  REQUIRE(load_bytes(bytes_of(squeeze_excite_graph(hard)), &m).ok());
  const auto& a = std::get<SqueezeExciteAttrs>(m->graph.nodes[0].attrs);
  CHECK((a.activation == hard.activation && a.gate == hard.gate && a.gate_alpha == hard.gate_alpha &&
         a.gate_beta == hard.gate_beta));
  // The values against the formula in double.
  const std::vector<float> img = test_image();
  const std::vector<float> y = run_data_op(m, img);
  const std::vector<float> w1 = test::pseudo_random(6, 21, 0.05f), w2 = test::pseudo_random(6, 22);
  const double b1[2] = {0.25, -0.5}, b2[3] = {0.5, -1.0, 0.125};
  double s[3] = {}, h[2] = {};
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 64; ++i) s[c] += img[c * 64 + i];
    s[c] /= 64;
  }
  for (int j = 0; j < 2; ++j) {
    double v = b1[j];
    for (int c = 0; c < 3; ++c) v += double(w1[j * 3 + c]) * s[c];
    h[j] = v / (1 + std::exp(-v));
  }
  REQUIRE(y.size() == 192);
  for (int c = 0; c < 3; ++c) {
    double v = b2[c];
    for (int j = 0; j < 2; ++j) v += double(w2[c * 2 + j]) * h[j];
    const double gate = std::min(1.0, std::max(0.0, v / 6 + 0.5));
    for (int i = 0; i < 64; ++i) CHECK(std::abs(y[c * 64 + i] - img[c * 64 + i] * gate) <= 1e-5 * 100);
  }

  SqueezeExciteAttrs sigmoid_alpha;  // the sigmoid gate has no parameters
  sigmoid_alpha.gate_alpha = 0.5f;
  const std::vector<std::pair<Graph, const char*>> bad = {
      {squeeze_excite_graph(sigmoid_alpha), "gate Sigmoid's alpha 0.500000 must be 0 (unused)"},
      {squeeze_excite_graph(hard, Shape{2, 4}), "fc1_weight must be [Cr,3] or [Cr,3,1,1], got [2,4]"},
      {squeeze_excite_graph(hard, Shape{2, 3}, Shape{3, 2, 3, 1}), "fc2_weight must be [3,2] or [3,2,1,1]"},
  };
  for (const auto& [g, why] : bad) {
    const std::vector<uint8_t> b = bytes_of(g);
    expect_refused(b, "SqueezeExcite");
    expect_refused(b, "'data_op'");
    expect_refused(b, why);
  }
  // Edited files: enum values this build does not know, a non-finite gate parameter.
  auto edit = [&](const std::function<void(fb::SqueezeExciteOptions*)>& change) {
    return edited(bytes_of(squeeze_excite_graph(hard)), [&](fb::Model* mm) {
      auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(0);
      REQUIRE(op->options_type() == fb::OpOptions::SqueezeExciteOptions);
      change(static_cast<fb::SqueezeExciteOptions*>(op->mutable_options()));
    });
  };
  expect_refused(edit([](fb::SqueezeExciteOptions* o) {
                   REQUIRE(o->mutate_activation(static_cast<fb::SqueezeActivation>(2)));
                 }),
                 "invalid value of option 'activation'");
  expect_refused(
      edit([](fb::SqueezeExciteOptions* o) { REQUIRE(o->mutate_gate(static_cast<fb::ExciteGate>(-3))); }),
      "invalid value of option 'gate'");
  const std::vector<uint8_t> nan_alpha =
      edit([](fb::SqueezeExciteOptions* o) { REQUIRE(o->mutate_gate_alpha(NAN)); });
  expect_refused(nan_alpha, "SqueezeExcite options: gate HardSigmoid's alpha nan is not finite");
  expect_refused(edit([](fb::SqueezeExciteOptions* o) { REQUIRE(o->mutate_gate_beta(INFINITY)); }),
                 "beta inf is not finite");
}

namespace {

// image [B,3,8,8] -> Reshape [B,8,24] -> ExternalAttention (2 heads of 12, S = 5; weight shapes as given)
// -> head.
Graph external_attention_graph(const ExternalAttentionAttrs& a, const Shape& w0 = Shape{5, 12},
                               const Shape& w1 = Shape{12, 5}, const Shape& b0 = Shape{5}) {
  return image_graph(
      [&](Graph& gr, int32_t x) {
        const int32_t tokens = gr.add_activation("tokens", Shape());
        gr.add_node(OpType::kReshape, ReshapeAttrs{{0, 8, 24}}, {x}, {tokens}, "to_tokens");
        const int32_t y = gr.add_activation("op_out", Shape());
        gr.add_node(OpType::kExternalAttention, a,
                    {tokens, gr.add_constant("w0", w0, test::pseudo_random(w0.numel(), 31, 0.005f)),
                     gr.add_constant("b0", b0, test::pseudo_random(b0.numel(), 32)),
                     gr.add_constant("w1", w1, test::pseudo_random(w1.numel(), 33)),
                     gr.add_constant("b1", Shape{12}, test::pseudo_random(12, 34))},
                    {y}, "data_op");
        return y;
      },
      192);
}

}  // namespace

TEST_CASE(
    "hostile model: ExternalAttention round-trips with its values and refuses invalid attributes, naming "
    "it") {
  ExternalAttentionAttrs attrs;
  attrs.num_heads = 2;
  attrs.eps = 1e-6f;  // not the schema's default, so that an edit can reach it
  std::shared_ptr<const Model> m;
  REQUIRE(load_bytes(bytes_of(external_attention_graph(attrs)), &m).ok());
  const auto& a = std::get<ExternalAttentionAttrs>(m->graph.nodes[1].attrs);
  CHECK((a.num_heads == 2 && a.eps == 1e-6f));
  // The values against the formula in double (docs/linear_attention.md, "External Attention").
  const std::vector<float> img = test_image();
  const std::vector<float> y = run_data_op(m, img);
  REQUIRE(y.size() == 192);
  const std::vector<float> w0 = test::pseudo_random(60, 31, 0.005f), b0 = test::pseudo_random(5, 32),
                           w1 = test::pseudo_random(60, 33), b1 = test::pseudo_random(12, 34);
  for (int h = 0; h < 2; ++h) {
    double att[8][5];
    for (int s = 0; s < 5; ++s) {
      double mx = -1e300, z = 0;
      for (int n = 0; n < 8; ++n) {
        double l = b0[s];
        for (int t = 0; t < 12; ++t) l += double(img[n * 24 + h * 12 + t]) * w0[s * 12 + t];
        att[n][s] = l;
        mx = std::max(mx, l);
      }
      for (int n = 0; n < 8; ++n) z += att[n][s] = std::exp(att[n][s] - mx);
      for (int n = 0; n < 8; ++n) att[n][s] /= z;
    }
    for (int n = 0; n < 8; ++n) {
      double sum = 0;
      for (int s = 0; s < 5; ++s) sum += att[n][s];
      for (int j = 0; j < 12; ++j) {
        double v = b1[j];
        for (int s = 0; s < 5; ++s) v += att[n][s] / (1e-6 + sum) * w1[j * 5 + s];
        CHECK(std::abs(y[n * 24 + h * 12 + j] - v) <= 1e-5 * (1 + std::abs(v)));
      }
    }
  }

  ExternalAttentionAttrs three_heads = attrs, no_heads = attrs, negative_eps = attrs;
  three_heads.num_heads = 5;  // 24 channels are not 5 heads
  no_heads.num_heads = 0;
  negative_eps.eps = -1e-9f;
  const std::vector<std::pair<Graph, const char*>> bad = {
      {external_attention_graph(three_heads), "C = 24 is not a multiple of heads = 5"},
      {external_attention_graph(no_heads), "heads must be >= 1, got 0"},
      {external_attention_graph(negative_eps), "eps must be finite and >= 0"},
      {external_attention_graph(attrs, Shape{5, 11}), "w0 must be [S,12] with S >= 1, got [5,11]"},
      {external_attention_graph(attrs, Shape{5, 12}, Shape{5, 12}), "w1 must be [12,5], got [5,12]"},
      {external_attention_graph(attrs, Shape{5, 12}, Shape{12, 5}, Shape{6}), "b0 must be [5], got [6]"},
  };
  for (const auto& [g, why] : bad) {
    const std::vector<uint8_t> b = bytes_of(g);
    expect_refused(b, "ExternalAttention");
    expect_refused(b, "'data_op'");
    expect_refused(b, why);
  }
  // Edited files: heads negative, eps NaN / infinite / negative.
  auto edit = [&](const std::function<void(fb::ExternalAttentionOptions*)>& change) {
    return edited(bytes_of(external_attention_graph(attrs)), [&](fb::Model* mm) {
      auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(1);
      REQUIRE(op->options_type() == fb::OpOptions::ExternalAttentionOptions);
      change(static_cast<fb::ExternalAttentionOptions*>(op->mutable_options()));
    });
  };
  expect_refused(edit([](fb::ExternalAttentionOptions* o) { REQUIRE(o->mutate_heads(-2)); }),
                 "ExternalAttention options: heads must be >= 1, got -2");
  expect_refused(edit([](fb::ExternalAttentionOptions* o) { REQUIRE(o->mutate_eps(NAN)); }),
                 "ExternalAttention options: eps must be finite and >= 0, got nan");
  expect_refused(edit([](fb::ExternalAttentionOptions* o) { REQUIRE(o->mutate_eps(INFINITY)); }),
                 "eps must be finite and >= 0, got inf");
  expect_refused(edit([](fb::ExternalAttentionOptions* o) { REQUIRE(o->mutate_eps(-1.0f)); }),
                 "eps must be finite and >= 0, got -1");
}

namespace {

// image [B,3,8,8] -> Reshape [B,24,8] as q, k and v -> NystromAttention (heads 2, d = 4; V conv weight of the
// given shape) -> head.
Graph nystrom_graph(const NystromAttentionAttrs& a, const Shape& conv = Shape{2, 1, 3, 1}) {
  return image_graph(
      [&](Graph& gr, int32_t x) {
        const int32_t t = gr.add_activation("tokens", Shape());
        gr.add_node(OpType::kReshape, ReshapeAttrs{{0, 24, 8}}, {x}, {t}, "to_tokens");
        const int32_t y = gr.add_activation("op_out", Shape());
        gr.add_node(OpType::kNystromAttention, a,
                    {t, t, t, gr.add_constant("conv.w", conv, test::pseudo_random(conv.numel(), 31))}, {y},
                    "data_op");
        return y;
      },
      192);
}

NystromAttentionAttrs nystrom_attrs() {
  NystromAttentionAttrs a;
  a.num_heads = 2;
  a.landmarks = 5;
  a.q_scale = 0.01f;
  a.k_scale = 0.02f;
  a.init = NystromInit::kPerHead;
  a.iterations = 6;
  return a;
}

// image [B,3,8,8] -> Reshape to tokens [B,3,64] -> KernelizedAttention with q = k = v = the tokens (4 heads
// of 16 channels) -> head. `v_channels` other than 64 feeds v through a Slice of that many channels.
Graph kernelized_graph(const KernelizedAttentionAttrs& a, int64_t v_channels = 64) {
  return image_graph(
      [&](Graph& gr, int32_t x) {
        const int32_t t = gr.add_activation("tokens", Shape());
        gr.add_node(OpType::kReshape, ReshapeAttrs{{0, 3, 64}}, {x}, {t}, "to_tokens");
        int32_t v = t;
        if (v_channels != 64) {
          v = gr.add_activation("v", Shape());
          gr.add_node(OpType::kSlice, SliceAttrs{2, 0, v_channels}, {t}, {v}, "v_slice");
        }
        const int32_t y = gr.add_activation("op_out", Shape());
        gr.add_node(OpType::kKernelizedAttention, a, {t, t, v}, {y}, "data_op");
        return y;
      },
      3 * v_channels);
}

}  // namespace

TEST_CASE("hostile model: NystromAttention round-trips its attributes and refuses invalid ones, naming it") {
  std::shared_ptr<const Model> m;
  Status st = load_bytes(bytes_of(nystrom_graph(nystrom_attrs())), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const auto& a = std::get<NystromAttentionAttrs>(m->graph.nodes[1].attrs);
  CHECK((a.num_heads == 2 && a.landmarks == 5 && a.q_scale == 0.01f && a.k_scale == 0.02f &&
         a.init == NystromInit::kPerHead && a.iterations == 6));
  const std::vector<float> y = run_data_op(m, test_image());
  REQUIRE(y.size() == 192);
  for (float v : y) CHECK(std::isfinite(v));

  auto with = [](const std::function<void(NystromAttentionAttrs&)>& change) {
    NystromAttentionAttrs b = nystrom_attrs();
    change(b);
    return b;
  };
  const std::vector<std::pair<Graph, const char*>> bad = {
      {nystrom_graph(with([](NystromAttentionAttrs& b) { b.landmarks = 0; })), "landmarks 0 must be >= 1"},
      {nystrom_graph(with([](NystromAttentionAttrs& b) { b.landmarks = 25; })),
       "landmarks 25 must not exceed the 24 tokens"},
      {nystrom_graph(with([](NystromAttentionAttrs& b) { b.num_heads = 3; })),
       "C = 8 must be a positive multiple of num_heads 3"},
      {nystrom_graph(with([](NystromAttentionAttrs& b) { b.num_heads = 0; })), "num_heads 0 must be >= 1"},
      {nystrom_graph(with([](NystromAttentionAttrs& b) { b.iterations = 101; })),
       "iterations 101 must be in [0, 100]"},
      {nystrom_graph(with([](NystromAttentionAttrs& b) { b.iterations = -1; })), "iterations -1 must be in"},
      {nystrom_graph(with([](NystromAttentionAttrs& b) { b.q_scale = INFINITY; })), "must be finite"},
      {nystrom_graph(nystrom_attrs(), Shape{2, 1, 2, 1}), "v_conv_weight must be [2,1,ks,1] with ks odd"},
      {nystrom_graph(nystrom_attrs(), Shape{2, 1, 3, 3}), "v_conv_weight must be [2,1,ks,1]"},
  };
  for (const auto& [g, why] : bad) {
    const std::vector<uint8_t> b = bytes_of(g);
    expect_refused(b, "NystromAttention");
    expect_refused(b, why);
  }
  // Edited files: an initialisation this build does not know, a NaN scale, a huge iteration count.
  auto edit = [&](const std::function<void(fb::NystromAttentionOptions*)>& change) {
    return edited(bytes_of(nystrom_graph(nystrom_attrs())), [&](fb::Model* mm) {
      auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(1);
      REQUIRE(op->options_type() == fb::OpOptions::NystromAttentionOptions);
      change(static_cast<fb::NystromAttentionOptions*>(op->mutable_options()));
    });
  };
  expect_refused(
      edit([](fb::NystromAttentionOptions* o) { REQUIRE(o->mutate_init(static_cast<fb::NystromInit>(2))); }),
      "invalid value of option 'init'");
  expect_refused(edit([](fb::NystromAttentionOptions* o) { REQUIRE(o->mutate_k_scale(NAN)); }),
                 "NystromAttention options: q_scale 0.010000 and k_scale nan must be finite");
  expect_refused(edit([](fb::NystromAttentionOptions* o) { REQUIRE(o->mutate_iterations(1 << 30)); }),
                 "iterations 1073741824 must be in [0, 100]");
  expect_refused(edit([](fb::NystromAttentionOptions* o) { REQUIRE(o->mutate_landmarks(-7)); }),
                 "landmarks -7 must be >= 1");
}

TEST_CASE("hostile model: KernelizedAttention round-trips with its values and refuses invalid attributes") {
  KernelizedAttentionAttrs elu;
  elu.num_heads = 4;
  elu.eps = 0.25f;
  std::shared_ptr<const Model> m;
  REQUIRE(load_bytes(bytes_of(kernelized_graph(elu)), &m).ok());
  const auto& a = std::get<KernelizedAttentionAttrs>(m->graph.nodes[1].attrs);
  CHECK((a.kind == elu.kind && a.num_heads == 4 && a.eps == 0.25f && a.scale == 1.0f));
  // The values against the quadratic form of the Linear Transformer in double:
  // out_l = Σ_s (φ(q_l)·φ(k_s)) v_s / (Σ_s φ(q_l)·φ(k_s) + eps), φ = elu + 1, per head of 16 channels.
  const std::vector<float> img = test_image();
  const std::vector<float> y = run_data_op(m, img);
  REQUIRE(y.size() == 192);
  auto phi = [](double x) { return x > 0 ? x + 1 : std::exp(x); };
  double worst = 0;
  for (int h = 0; h < 4; ++h)
    for (int l = 0; l < 3; ++l) {
      double w[3], den = 0.25;
      for (int s = 0; s < 3; ++s) {
        w[s] = 0;
        for (int d = 0; d < 16; ++d) w[s] += phi(img[l * 64 + h * 16 + d]) * phi(img[s * 64 + h * 16 + d]);
        den += w[s];
      }
      for (int m2 = 0; m2 < 16; ++m2) {
        double num = 0;
        for (int s = 0; s < 3; ++s) num += w[s] * img[s * 64 + h * 16 + m2];
        worst = std::max(worst, std::abs(y[l * 64 + h * 16 + m2] - num / den));
      }
    }
  CHECK(worst <= 1e-5 * 100);

  KernelizedAttentionAttrs bad_kind = elu, zero_heads = elu, neg_eps = elu, scaled_eps = elu, nan_scale;
  bad_kind.kind = static_cast<KernelizedKind>(5);
  zero_heads.num_heads = 0;
  neg_eps.eps = -1.0f;
  scaled_eps.kind = KernelizedKind::kEluScaled;  // eps belongs to kEluNormalized only
  nan_scale.kind = KernelizedKind::kEluScaled;
  nan_scale.eps = 0.0f;
  nan_scale.scale = NAN;
  KernelizedAttentionAttrs softmax_scale;
  softmax_scale.kind = KernelizedKind::kSoftmaxPair;
  softmax_scale.eps = 0.0f;
  softmax_scale.scale = 2.0f;
  KernelizedAttentionAttrs heads5 = elu;
  heads5.num_heads = 5;
  const std::vector<std::pair<Graph, const char*>> bad = {
      {kernelized_graph(bad_kind), "invalid value of option 'kind'"},
      {kernelized_graph(zero_heads), "heads 0 must be >= 1"},
      {kernelized_graph(neg_eps), "EluNormalized's eps -1.000000 must be finite and >= 0"},
      {kernelized_graph(scaled_eps), "EluScaled's eps 0.250000 must be 0 (unused)"},
      {kernelized_graph(nan_scale), "EluScaled's scale nan must be finite and > 0"},
      {kernelized_graph(softmax_scale), "SoftmaxPair's scale 2.000000 must be 1 (unused)"},
      {kernelized_graph(heads5), "heads 5 must divide q's channels 64 and v's 64"},
      {kernelized_graph(elu, 30), "heads 4 must divide q's channels 64 and v's 30"},
  };
  for (const auto& [g, why] : bad) {
    const std::vector<uint8_t> b = bytes_of(g);
    expect_refused(b, "KernelizedAttention");
    expect_refused(b, why);
  }
  // Edited files: an enum value this build does not know, non-finite and negative parameters.
  auto edit = [&](const std::function<void(fb::KernelizedAttentionOptions*)>& change) {
    return edited(bytes_of(kernelized_graph(elu)), [&](fb::Model* mm) {
      auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(1);
      REQUIRE(op->options_type() == fb::OpOptions::KernelizedAttentionOptions);
      change(static_cast<fb::KernelizedAttentionOptions*>(op->mutable_options()));
    });
  };
  expect_refused(edit([](fb::KernelizedAttentionOptions* o) {
                   REQUIRE(o->mutate_kind(static_cast<fb::KernelizedKind>(3)));
                 }),
                 "invalid value of option 'kind'");
  expect_refused(edit([](fb::KernelizedAttentionOptions* o) { REQUIRE(o->mutate_eps(NAN)); }),
                 "KernelizedAttention options: EluNormalized's eps nan must be finite and >= 0");
  expect_refused(edit([](fb::KernelizedAttentionOptions* o) { REQUIRE(o->mutate_eps(INFINITY)); }),
                 "eps inf must be finite");
  expect_refused(edit([](fb::KernelizedAttentionOptions* o) { REQUIRE(o->mutate_num_heads(-4)); }),
                 "heads -4 must be >= 1");
}

TEST_CASE("hostile model: a graph `run` cannot honestly serve is refused at load") {
  const Graph good = test::tiny_classifier();
  REQUIRE(load_bytes(bytes_of(good)).ok());
  SUBCASE("the output is a constant") {
    Graph g = good;
    for (size_t i = 0; i < g.tensors.size(); ++i)
      if (g.tensors[i].name == "head.w") g.outputs = {static_cast<int32_t>(i)};
    expect_refused(bytes_of(g), "constant");
  }
  SUBCASE("the output is the graph input") {
    Graph g = good;
    g.outputs = {g.inputs[0]};
    expect_refused(bytes_of(g), "graph input");
  }
  SUBCASE("the output has a dtype run cannot produce") {
    Graph g = good;
    g.tensors[g.outputs[0]].dtype = DType::kInt8;
    expect_refused(bytes_of(g), "int8");
  }
  SUBCASE("an activation has a dtype the kernels do not compute") {
    Graph g = good;
    g.tensors[g.nodes[0].outputs[0]].dtype = DType::kInt64;
    expect_refused(bytes_of(g), "int64");
  }
  SUBCASE("more labels than classes") {
    Graph g = good;
    g.metadata.labels.push_back("f");
    expect_refused(bytes_of(g), "6 labels for 5 classes");
  }
  SUBCASE("NaN mean, infinite std, zero std") {
    Graph g = good;
    g.metadata.preprocess.mean[1] = std::numeric_limits<float>::quiet_NaN();
    expect_refused(bytes_of(g), "mean");
    g = good;
    g.metadata.preprocess.std[2] = std::numeric_limits<float>::infinity();
    expect_refused(bytes_of(g), "std");
    g = good;
    g.metadata.preprocess.std[0] = 0.0f;
    expect_refused(bytes_of(g), "std");
  }
  SUBCASE("a NaN or infinite weight") {
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
      Graph g = good;
      for (Tensor& t : g.tensors)
        if (t.name == "qkv.w") {
          std::vector<float> v(reinterpret_cast<const float*>(t.constant.data),
                               reinterpret_cast<const float*>(t.constant.data) + t.constant.size / 4);
          v[17] = bad;
          auto storage = std::make_shared<std::vector<float>>(v);
          t.constant.data = reinterpret_cast<const uint8_t*>(storage->data());
          t.constant.owner = storage;
        }
      expect_refused(bytes_of(g), "qkv.w");
      expect_refused(bytes_of(g), "element 17");
    }
  }
}

TEST_CASE("hostile model: weight buffers that share bytes are refused") {
  const std::vector<uint8_t> b = bytes_of(test::tiny_classifier());
  expect_refused(edited(b,
                        [](fb::Model* m) {
                          auto* bufs = m->mutable_buffers();
                          // Buffer 2 starts inside buffer 1 (both stay aligned and inside the file).
                          const_cast<fb::Buffer*>(bufs->Get(2))->mutate_offset(bufs->Get(1)->offset());
                        }),
                 "overlaps");
}

TEST_CASE("hostile model: a graph with more ops than the limit is refused before planning") {
  Graph g = image_graph(
      [](Graph& gr, int32_t x) {
        int32_t t = x;
        for (int i = 0; i < 70000; ++i) {
          const int32_t r = gr.add_activation("r" + std::to_string(i), Shape());
          gr.add_node(OpType::kRelu, NoAttrs{}, {t}, {r}, "relu");
          t = r;
        }
        return t;
      },
      192);
  expect_refused(bytes_of(g), "more than the limit");
}

TEST_CASE("hostile model: a plan larger than the session's memory limit fails creation, naming the tensor") {
  std::shared_ptr<const Model> m;
  REQUIRE(load_bytes(bytes_of(test::tiny_classifier()), &m).ok());
  SessionOptions so;
  so.backend = "ref";
  so.max_batch = 64;
  so.max_memory_bytes = 4096;
  std::unique_ptr<Session> s;
  Status st = Session::create(m, so, &s);
  CHECK(st.code() == StatusCode::kOutOfMemory);
  CHECK_MESSAGE(st.message().find("memory limit") != std::string::npos, st.message());
  CHECK_MESSAGE(st.message().find("largest tensor is '") != std::string::npos, st.message());
  so.max_memory_bytes = 0;  // the machine's memory: plenty for this model
  CHECK(Session::create(m, so, &s).ok());
}

TEST_CASE("hostile model: C API options from an older, shorter struct keep the new fields' defaults") {
  // The old code copied sizeof(vitrt_session_options_t) bytes from the caller whatever struct_size said.
  std::vector<uint8_t> b = bytes_of(test::tiny_classifier());
  const size_t cap = (b.size() + 63) / 64 * 64;
  uint8_t* p = static_cast<uint8_t*>(std::aligned_alloc(64, cap));
  std::memcpy(p, b.data(), b.size());
  vitrt_model_t* model = nullptr;
  REQUIRE(vitrt_model_load_from_memory(p, b.size(), &model) == VITRT_OK);
  struct {
    vitrt_session_options_t o;
    unsigned char poison[64];
  } short_opts;
  std::memset(&short_opts, 0xff, sizeof short_opts);
  short_opts.o = vitrt_session_default_options();
  short_opts.o.max_memory_bytes = 1;  // beyond the struct_size below: must be ignored
  short_opts.o.struct_size = offsetof(vitrt_session_options_t, max_memory_bytes);
  vitrt_session_t* s = nullptr;
  CHECK_MESSAGE(vitrt_session_create(model, &short_opts.o, &s) == VITRT_OK, vitrt_last_error_message());
  vitrt_session_free(s);
  vitrt_model_free(model);
  std::free(p);
}

TEST_CASE("hostile model: a FIFO, a device or a directory as the model path is refused at once, naming it") {
  // Opening a FIFO without O_NONBLOCK waited forever for a writer.
  char dir[] = "/tmp/vitrt_fifo_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string fifo = std::string(dir) + "/model.vitrt";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::shared_ptr<const Model> m;
  Status st = load_model(fifo, &m);
  CHECK(st.code() == StatusCode::kIo);
  CHECK_MESSAGE(st.message().find("a FIFO") != std::string::npos, st.message());
  CHECK_MESSAGE(st.message().find(fifo) != std::string::npos, st.message());
  unlink(fifo.c_str());
  rmdir(dir);
  st = load_model("/dev/zero", &m);
  CHECK_MESSAGE(st.message().find("a character device") != std::string::npos, st.message());
  st = load_model("/tmp", &m);
  CHECK_MESSAGE(st.message().find("a directory") != std::string::npos, st.message());
}

namespace {

struct SkWeightShapes {
  Shape fc_reduce{2, 3};            // [d, C]
  Shape fc_select{6, 2, 1, 1};      // [M·C, d, 1, 1]
  Shape z_scale{2}, z_shift{2};     // the folded BatchNorm on z
  bool scale = true, shift = true;  // present
};

// image [B,3,8,8] -> SelectiveKernel over two branches, the image and Relu(image - 40) (C = 3, d = 2, M = 2;
// the inputs' shapes as given) -> head.
Graph selective_kernel_graph(const SelectiveKernelAttrs& a, const SkWeightShapes& s = {}) {
  return image_graph(
      [&](Graph& gr, int32_t x) {
        const int32_t shifted = gr.add_activation("shifted", Shape());
        gr.add_node(OpType::kAdd, NoAttrs{}, {x, gr.add_constant("minus40", Shape{1}, {-40.0f})}, {shifted},
                    "shift");
        const int32_t branch1 = gr.add_activation("branch1", Shape());
        gr.add_node(OpType::kRelu, NoAttrs{}, {shifted}, {branch1}, "branch1_relu");
        const int32_t y = gr.add_activation("op_out", Shape());
        std::vector<int32_t> ins = {x, branch1};
        for (int i = 2; i < a.branches; ++i) ins.push_back(x);
        ins.push_back(
            gr.add_constant("fc_reduce.w", s.fc_reduce, test::pseudo_random(s.fc_reduce.numel(), 31, 0.02f)));
        ins.push_back(gr.add_constant("fc_reduce.b", Shape{2}, {0.25f, -0.5f}));
        ins.push_back(s.scale
                          ? gr.add_constant("z.scale", s.z_scale, std::vector<float>(s.z_scale.numel(), 1.5f))
                          : kAbsent);
        ins.push_back(s.shift
                          ? gr.add_constant("z.shift", s.z_shift, std::vector<float>(s.z_shift.numel(), 0.5f))
                          : kAbsent);
        ins.push_back(
            gr.add_constant("fc_select.w", s.fc_select, test::pseudo_random(s.fc_select.numel(), 32, 0.5f)));
        gr.add_node(OpType::kSelectiveKernel, a, ins, {y}, "data_op");
        return y;
      },
      192);
}

}  // namespace

TEST_CASE(
    "hostile model: SelectiveKernel round-trips with its values and refuses invalid inputs, naming it") {
  SelectiveKernelAttrs relu;
  std::shared_ptr<const Model> m;
  REQUIRE(load_bytes(bytes_of(selective_kernel_graph(relu)), &m).ok());
  const auto& a = std::get<SelectiveKernelAttrs>(m->graph.nodes[2].attrs);
  CHECK((a.branches == 2 && a.z_activation == SelectiveKernelActivation::kRelu));
  // The values against the formula in double (docs/linear_attention.md "SE and SK").
  const std::vector<float> img = test_image();
  const std::vector<float> y = run_data_op(m, img);
  const std::vector<float> wr = test::pseudo_random(6, 31, 0.02f), ws = test::pseudo_random(12, 32, 0.5f);
  const double br[2] = {0.25, -0.5};
  std::vector<double> x0(192), x1(192);
  double s[3] = {}, z[2] = {};
  for (int i = 0; i < 192; ++i) {
    x0[i] = img[i];
    x1[i] = std::max(0.0, double(img[i]) - 40);
    s[i / 64] += (x0[i] + x1[i]) / 64;
  }
  for (int j = 0; j < 2; ++j) {
    double v = br[j];
    for (int c = 0; c < 3; ++c) v += double(wr[j * 3 + c]) * s[c];
    z[j] = std::max(0.0, v * 1.5 + 0.5);
  }
  REQUIRE(y.size() == 192);
  for (int c = 0; c < 3; ++c) {
    double l[2];
    for (int i = 0; i < 2; ++i)
      l[i] = double(ws[(i * 3 + c) * 2]) * z[0] + double(ws[(i * 3 + c) * 2 + 1]) * z[1];
    const double a0 = 1 / (1 + std::exp(l[1] - l[0]));
    for (int p = c * 64; p < (c + 1) * 64; ++p)
      CHECK(std::abs(y[p] - (a0 * x0[p] + (1 - a0) * x1[p])) <= 1e-5 * (1 + std::abs(x0[p])));
  }

  SelectiveKernelAttrs none_act = relu, many = relu, zero = relu;
  none_act.z_activation = SelectiveKernelActivation::kNone;
  many.branches = 17;
  zero.branches = 0;
  SkWeightShapes wrong_reduce, wrong_select, lone_scale, wrong_scale;
  wrong_reduce.fc_reduce = Shape{2, 4};
  wrong_select.fc_select = Shape{5, 2};
  lone_scale.shift = false;
  wrong_scale.z_scale = Shape{3};
  const std::vector<std::pair<Graph, const char*>> bad = {
      {selective_kernel_graph(many), "branches must be 1..16, got 17"},
      {selective_kernel_graph(zero), "branches must be 1..16, got 0"},
      {selective_kernel_graph(relu, wrong_reduce), "fc_reduce_weight must be [d,3] or [d,3,1,1], got [2,4]"},
      {selective_kernel_graph(none_act, wrong_select),
       "fc_select_weight must be [6,2] or [6,2,1,1], got [5,2]"},
      {selective_kernel_graph(relu, lone_scale), "z_scale and z_shift come together"},
      {selective_kernel_graph(relu, wrong_scale), "z_scale and z_shift must be [2]"},
  };
  for (const auto& [g, why] : bad) {
    const std::vector<uint8_t> b = bytes_of(g);
    expect_refused(b, "SelectiveKernel");
    expect_refused(b, why);
  }
  // Edited files (a graph whose options differ from the schema's defaults, so that they are stored): an
  // activation this build does not know, branch counts out of range or disagreeing with the inputs.
  const SelectiveKernelAttrs three{3, SelectiveKernelActivation::kNone};
  SkWeightShapes three_shapes;
  three_shapes.fc_select = Shape{9, 2};
  REQUIRE(load_bytes(bytes_of(selective_kernel_graph(three, three_shapes))).ok());
  auto edit = [&](const std::function<void(fb::SelectiveKernelOptions*)>& change) {
    return edited(bytes_of(selective_kernel_graph(three, three_shapes)), [&](fb::Model* mm) {
      auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(2);
      REQUIRE(op->options_type() == fb::OpOptions::SelectiveKernelOptions);
      change(static_cast<fb::SelectiveKernelOptions*>(op->mutable_options()));
    });
  };
  expect_refused(edit([](fb::SelectiveKernelOptions* o) {
                   REQUIRE(o->mutate_z_activation(static_cast<fb::SelectiveKernelActivation>(2)));
                 }),
                 "invalid value of option 'z_activation'");
  expect_refused(edit([](fb::SelectiveKernelOptions* o) { REQUIRE(o->mutate_branches(-7)); }),
                 "SelectiveKernel options: branches must be 1..16, got -7");
  expect_refused(edit([](fb::SelectiveKernelOptions* o) { REQUIRE(o->mutate_branches(4)); }),
                 "4 branches take 9..10 inputs, got 8");
  expect_refused(edit([](fb::SelectiveKernelOptions* o) { REQUIRE(o->mutate_branches(1)); }),
                 "SelectiveKernel: 1 branches take 6..7 inputs, got 8");
}

namespace {

// image [B,3,8,8] -> Reshape [B,3,64] (3 tokens of 64 channels, q and k alike) -> FastformerAttention with
// weights and biases of the given shapes -> head.
Graph fastformer_graph(const FastformerAttentionAttrs& a, const Shape& wq = Shape{2, 64},
                       const Shape& bk = Shape{2}) {
  return image_graph(
      [&](Graph& gr, int32_t x) {
        const int32_t t = gr.add_activation("tokens", Shape());
        gr.add_node(OpType::kReshape, ReshapeAttrs{{0, 3, 64}}, {x}, {t}, "tokens");
        const int32_t y = gr.add_activation("op_out", Shape());
        gr.add_node(OpType::kFastformerAttention, a,
                    {t, t, gr.add_constant("query_att.w", wq, test::pseudo_random(wq.numel(), 31, 0.01f)),
                     gr.add_constant("query_att.b", Shape{2}, {0.25f, -0.5f}),
                     gr.add_constant("key_att.w", Shape{2, 64}, test::pseudo_random(128, 32, 0.01f)),
                     gr.add_constant("key_att.b", bk, test::pseudo_random(bk.numel(), 33))},
                    {y}, "data_op");
        return y;
      },
      192);
}

}  // namespace

TEST_CASE(
    "hostile model: FastformerAttention round-trips with its values and refuses bad heads, scale and "
    "weights, naming it") {
  FastformerAttentionAttrs good;
  good.heads = 2;
  good.scale = 0.125f;
  std::shared_ptr<const Model> m;
  REQUIRE(load_bytes(bytes_of(fastformer_graph(good)), &m).ok());
  const auto& a = std::get<FastformerAttentionAttrs>(m->graph.nodes[1].attrs);
  CHECK(a.heads == 2);
  CHECK(a.scale == 0.125f);
  // The values against the formula in double (3 tokens x 64 channels, heads of 32).
  const std::vector<float> img = test_image();
  const std::vector<float> y = run_data_op(m, img);
  const std::vector<float> wq = test::pseudo_random(128, 31, 0.01f), wk = test::pseudo_random(128, 32, 0.01f);
  const std::vector<float> bk = test::pseudo_random(2, 33);
  const double bq[2] = {0.25, -0.5};
  double p[64] = {}, g[64] = {};
  for (int pass = 0; pass < 2; ++pass) {
    for (int h = 0; h < 2; ++h) {
      double s[3], mx = -1e300, z = 0;
      for (int n = 0; n < 3; ++n) {
        double v = pass == 0 ? bq[h] : bk[h];
        for (int c = 0; c < 64; ++c)
          v += double(pass == 0 ? wq[h * 64 + c] : wk[h * 64 + c]) * img[n * 64 + c] *
               (pass == 0 ? 1.0 : p[c]);
        s[n] = 0.125 * v;
        mx = std::max(mx, s[n]);
      }
      for (int n = 0; n < 3; ++n) z += s[n] = std::exp(s[n] - mx);
      for (int c = h * 32; c < h * 32 + 32; ++c) {
        double acc = 0;
        for (int n = 0; n < 3; ++n) acc += s[n] / z * img[n * 64 + c] * (pass == 0 ? 1.0 : p[c]);
        (pass == 0 ? p : g)[c] = acc;
      }
    }
  }
  REQUIRE(y.size() == 192);
  for (int n = 0; n < 3; ++n)
    for (int c = 0; c < 64; ++c) {
      const double want = g[c] * img[n * 64 + c];
      CHECK(std::abs(y[n * 64 + c] - want) <= 1e-5 * (1 + std::abs(want)));
    }

  FastformerAttentionAttrs three_heads = good, no_heads = good, nan_scale = good, negative_scale = good;
  three_heads.heads = 3;
  no_heads.heads = 0;
  nan_scale.scale = NAN;
  negative_scale.scale = -0.125f;
  const std::vector<std::pair<Graph, const char*>> bad = {
      {fastformer_graph(three_heads), "64 channels do not split into 3 heads"},
      {fastformer_graph(no_heads), "64 channels do not split into 0 heads"},
      {fastformer_graph(nan_scale), "scale nan (finite, > 0)"},
      {fastformer_graph(negative_scale), "scale -0.125000 (finite, > 0)"},
      {fastformer_graph(good, Shape{2, 63}), "weights must be [2,64], got [2,63] and [2,64]"},
      {fastformer_graph(good, Shape{2, 64}, Shape{3}), "biases must be [2], got [2] and [3]"},
  };
  for (const auto& [gr, why] : bad) {
    const std::vector<uint8_t> b = bytes_of(gr);
    expect_refused(b, "FastformerAttention");
    expect_refused(b, "'data_op'");
    expect_refused(b, why);
  }
  // Edited files: a head count far beyond the channels, an infinite scale.
  auto edit = [&](const std::function<void(fb::FastformerAttentionOptions*)>& change) {
    return edited(bytes_of(fastformer_graph(good)), [&](fb::Model* mm) {
      auto* op = mm->mutable_graph()->mutable_operators()->GetMutableObject(1);
      REQUIRE(op->options_type() == fb::OpOptions::FastformerAttentionOptions);
      change(static_cast<fb::FastformerAttentionOptions*>(op->mutable_options()));
    });
  };
  expect_refused(edit([](fb::FastformerAttentionOptions* o) { REQUIRE(o->mutate_heads(INT32_MIN)); }),
                 "do not split into -2147483648 heads");
  expect_refused(edit([](fb::FastformerAttentionOptions* o) { REQUIRE(o->mutate_scale(INFINITY)); }),
                 "scale inf (finite, > 0)");
}
