// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_epilogue's Conv2d residual rule on odd sizes: ResNet's bottleneck ends (conv -> Add(identity) -> ReLU,
// and conv -> Add(downsample conv computed after it) -> ReLU) become one conv with a residual input and a
// ReLU epilogue, and the graph gives the outputs of the graph as written on ref (identical bits) and cpu,
// batches 1..3. Near misses stay as written: a conv with an activation of its own (act(conv) + r is not
// act(conv + r)), a grouped conv, an Add that broadcasts, a conv result with a second reader.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "arch/graph_builder.h"
#include "graph_session_util.h"
#include "ops/op_registry.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

Graph build(int64_t h, int64_t w, int64_t c) {
  Checkpoint ck;
  uint32_t seed = 61;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float scale) {
    add_random(&ck, name, std::move(shape), seed++, scale);
  };
  struct ConvSpec {
    const char* name;
    int64_t cin_g, k;
  };
  const ConvSpec specs[] = {{"stem", 3, 3},    {"a1", c, 1},    {"a2", c, 3},   {"a3", c, 1},
                            {"b1", c, 1},      {"b2", c, 3},    {"down", c, 1}, {"relu", c, 1},
                            {"grp", c / 2, 3}, {"bcast", c, 1}, {"two", c, 1}};
  for (const ConvSpec& s : specs) {
    add(std::string(s.name) + ".weight", {c, s.cin_g, s.k, s.k},
        1.0f / static_cast<float>(s.cin_g * s.k * s.k));
    add(std::string(s.name) + ".bias", {c}, 0.3f);
  }
  add("row", {c, 1, 1}, 0.5f);
  GraphBuilder b(ck);
  auto conv = [&](int32_t x, const std::string& name, int32_t k, int32_t stride, Activation act,
                  int32_t groups = 1) {
    Conv2dAttrs a;
    a.stride_h = a.stride_w = stride;
    a.pad_h = a.pad_w = k / 2;
    a.groups = groups;
    a.activation = act;
    return b.op(OpType::kConv2d, a, {x, b.weight(name + ".weight"), b.weight(name + ".bias")}, name);
  };
  auto add_op = [&](int32_t x, int32_t y, const std::string& name) {
    return b.op(OpType::kAdd, NoAttrs{}, {x, y}, name);
  };
  auto relu = [&](int32_t x, const std::string& name) { return b.op(OpType::kRelu, NoAttrs{}, {x}, name); };
  const int32_t image = b.input("image", Shape{1, 3, h, w});
  int32_t x = conv(image, "stem", 3, 1, Activation::kRelu);
  // fused: identity bottleneck, the residual on the Add's right
  int32_t a = conv(x, "a1", 1, 1, Activation::kRelu);
  a = conv(a, "a2", 3, 1, Activation::kRelu);
  x = relu(add_op(conv(a, "a3", 1, 1, Activation::kNone), x, "a.add"), "a.relu");
  // fused: downsample bottleneck, the downsample conv computed after the main branch's last conv. The main
  // branch's b2 is on the Add's left, so it is the conv that takes the residual, and that residual (down) is
  // computed after b2: the fused conv must move to the Add's place (left where b2 was, it would read down
  // before down is written).
  a = conv(conv(x, "b1", 1, 1, Activation::kRelu), "b2", 3, 2, Activation::kNone);
  const int32_t down = conv(x, "down", 1, 2, Activation::kNone);
  x = relu(add_op(a, down, "b.add"), "b.relu");
  // left alone: the conv has a ReLU of its own
  x = relu(add_op(conv(x, "relu", 1, 1, Activation::kRelu), x, "relu.add"), "relu.relu");
  // left alone: a grouped conv
  x = add_op(conv(x, "grp", 3, 1, Activation::kNone, 2), x, "grp.add");
  // left alone: the Add broadcasts a [C,1,1] row
  x = add_op(conv(x, "bcast", 1, 1, Activation::kNone), b.weight("row"), "bcast.add");
  // left alone: the conv's result is read twice
  const int32_t two = conv(x, "two", 1, 1, Activation::kNone);
  x = add_op(add_op(two, x, "two.add"), two, "two.again");
  b.mark_output(x);
  return finish_image_graph(b, h, w);
}

int count_with_residual(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes)
    n += node.type == OpType::kConv2d && node.inputs.size() > 3 && node.inputs[3] != kAbsent;
  return n;
}

}  // namespace

TEST_CASE("fuse_epilogue: a residual Add (and ReLU) after a Conv2d become its epilogue, same outputs") {
  struct Size {
    int64_t h, w, c;
  };
  for (const Size& s : {Size{9, 7, 6}, Size{14, 14, 32}, Size{15, 11, 70}}) {
    CAPTURE(s.h);
    CAPTURE(s.w);
    CAPTURE(s.c);
    std::vector<uint8_t> storage;
    const auto model = load(build(s.h, s.w, s.c), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = session(model, backend, 3);
      auto written = session(model, backend, 3, "fuse_epilogue");
      CHECK(count_with_residual(fused->graph()) == 2);
      CHECK(count(fused->graph(), OpType::kAdd) == 5);
      CHECK(count(fused->graph(), OpType::kRelu) == 1);  // the one after the conv with its own ReLU
      CHECK(count_with_residual(written->graph()) == 0);
      CHECK(count(written->graph(), OpType::kAdd) == 7);
      check_same_outputs(*fused, *written, 3, 43, std::string(backend) == "ref" ? 0.0 : 2e-6);
    }
  }
}

TEST_CASE("Conv2d: a residual input of another shape than the output is a clear error") {
  Node n;
  n.type = OpType::kConv2d;
  n.attrs = Conv2dAttrs{};
  n.outputs = {0};
  const Shape x{2, 4, 5, 3}, w{6, 4, 1, 1}, bias{6}, good{2, 6, 5, 3}, bad{2, 6, 3, 5};
  Shape out;
  auto infer = [&](std::vector<const Shape*> in) {
    return infer_node_shapes(n, in.data(), static_cast<int>(in.size()), &out);
  };
  REQUIRE(infer({&x, &w, &bias, &good}).ok());
  CHECK(out == good);
  CHECK(infer({&x, &w, nullptr, &good}).ok());
  const Status st = infer({&x, &w, &bias, &bad});
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("Conv2d: residual must have the output's shape [2,6,5,3], got [2,6,3,5]") !=
        std::string::npos);
}
