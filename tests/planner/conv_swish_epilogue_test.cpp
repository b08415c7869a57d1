// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_epilogue's SiLU, HardSwish and ReLU6 rule on odd sizes: a Unary Silu, HardSwish or Clip to [0, 6] that
// is the only reader of a Conv2d's result (EfficientNet's conv -> BN -> SiLU, MobileNetV3's conv -> BN ->
// HardSwish, MobileNetV2's conv -> BN -> ReLU6; dense and depthwise) becomes the conv's epilogue, and the
// graph gives the outputs of the graph as written on ref (the same float functions: identical bits) and cpu,
// batches 1..3. Near misses stay as written: a conv that already has an activation, a conv result with a
// second reader, a Sigmoid (not an epilogue), a Clip to [0, 5] (not ReLU6), a Linear.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "arch/blocks.h"
#include "arch/graph_builder.h"
#include "graph_session_util.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

Graph build(int64_t h, int64_t w, int64_t c) {
  Checkpoint ck;
  uint32_t seed = 29;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float scale = 0.4f) {
    add_random(&ck, name, std::move(shape), seed++, scale);
  };
  add("stem.weight", {c, 3, 3, 3}), add("stem.bias", {c});
  add("dw.weight", {c, 1, 5, 5}), add("dw.bias", {c});
  add("dw6.weight", {c, 1, 3, 3}), add("dw6.bias", {c});
  for (const char* name : {"pw_relu", "pw_two", "pw_sig", "pw6", "pw5"}) {
    add(std::string(name) + ".weight", {c, c, 1, 1}, 1.0f / static_cast<float>(c));
    add(std::string(name) + ".bias", {c});
  }
  add("fc.weight", {c, c}), add("fc.bias", {c});
  GraphBuilder b(ck);
  auto conv = [&](int32_t x, const std::string& name, Conv2dAttrs a) {
    return b.op(OpType::kConv2d, a, {x, b.weight(name + ".weight"), b.weight(name + ".bias")}, name);
  };
  auto unary = [&](int32_t x, UnaryKind kind, const std::string& name, float hi = 0.0f) {
    return b.op(OpType::kUnary, UnaryAttrs{kind, 0.0f, hi}, {x}, name);
  };
  const int32_t image = b.input("image", Shape{1, 3, h, w});
  // fused: a dense 3x3 conv -> SiLU, a depthwise 5x5 stride-2 conv -> HardSwish
  int32_t x = unary(conv(image, "stem", Conv2dAttrs{1, 1, 1, 1}), UnaryKind::kSilu, "stem.act");
  Conv2dAttrs dw{2, 2, 2, 2};
  dw.groups = static_cast<int32_t>(c);
  x = unary(conv(x, "dw", dw), UnaryKind::kHardSwish, "dw.act");
  // left alone: the conv has a ReLU epilogue already
  Conv2dAttrs relu;
  relu.activation = Activation::kRelu;
  x = unary(conv(x, "pw_relu", relu), UnaryKind::kHardSwish, "pw_relu.act");
  // left alone: the conv's result is read by the SiLU and by the Add
  const int32_t two = conv(x, "pw_two", Conv2dAttrs{});
  x = b.op(OpType::kAdd, NoAttrs{}, {two, unary(two, UnaryKind::kSilu, "pw_two.act")}, "pw_two.add");
  // left alone: a Sigmoid is no epilogue
  x = unary(conv(x, "pw_sig", Conv2dAttrs{}), UnaryKind::kSigmoid, "pw_sig.act");
  // fused: ReLU6 after a depthwise 3x3 and after a pointwise conv; left alone: a Clip to [0, 5]
  Conv2dAttrs dw6{1, 1, 1, 1};
  dw6.groups = static_cast<int32_t>(c);
  x = unary(conv(x, "dw6", dw6), UnaryKind::kClip, "dw6.act", 6.0f);
  x = unary(conv(x, "pw6", Conv2dAttrs{}), UnaryKind::kClip, "pw6.act", 6.0f);
  x = unary(conv(x, "pw5", Conv2dAttrs{}), UnaryKind::kClip, "pw5.act", 5.0f);
  // left alone: SiLU after a Linear
  x = unary(linear(b, image_to_tokens(b, x, "tokens"), "fc", c, c), UnaryKind::kSilu, "fc.act");
  b.mark_output(x);
  return finish_image_graph(b, h, w);
}

int count_conv_activation(const Graph& g, Activation act) {
  int n = 0;
  for (const Node& node : g.nodes)
    n += node.type == OpType::kConv2d && std::get<Conv2dAttrs>(node.attrs).activation == act;
  return n;
}

}  // namespace

TEST_CASE(
    "fuse_epilogue: SiLU, HardSwish and ReLU6 after a Conv2d become its epilogue, near misses stay, same "
    "outputs") {
  struct Size {
    int64_t h, w, c;
  };
  for (const Size& s : {Size{9, 7, 5}, Size{16, 13, 24}, Size{11, 11, 67}}) {
    CAPTURE(s.h);
    CAPTURE(s.w);
    CAPTURE(s.c);
    std::vector<uint8_t> storage;
    const auto model = load(build(s.h, s.w, s.c), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = session(model, backend, 3);
      auto written = session(model, backend, 3, "fuse_epilogue");
      CHECK(count_conv_activation(fused->graph(), Activation::kSilu) == 1);
      CHECK(count_conv_activation(fused->graph(), Activation::kHardSwish) == 1);
      CHECK(count_conv_activation(fused->graph(), Activation::kRelu) == 1);
      CHECK(count_conv_activation(fused->graph(), Activation::kRelu6) == 2);
      // pw_relu's, pw_two's, the Sigmoid, the Clip to [0, 5], the Linear's
      CHECK(count(fused->graph(), OpType::kUnary) == 5);
      CHECK(count(written->graph(), OpType::kUnary) == 9);
      CHECK(count_conv_activation(written->graph(), Activation::kSilu) == 0);
      check_same_outputs(*fused, *written, 3, 41, std::string(backend) == "ref" ? 0.0 : 2e-6);
    }
  }
}
