// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_epilogue's residual rule on odd sizes: x + Linear(LN(x)) (the transformer block's residual) becomes
// one Linear with x as its residual input, and gives the outputs of the graph as written on every backend and
// batch; an Add whose other operand is produced after the Linear, or broadcasts, is left alone.
#include <doctest/doctest.h>

#include <cmath>
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
  uint32_t seed = 5;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    add_random(&ck, name, std::move(shape), seed++);
  };
  add("embed.weight", {c, 3}), add("embed.bias", {c});
  add("ln.weight", {c}), add("ln.bias", {c});
  add("fc1.weight", {2 * c, c}), add("fc1.bias", {2 * c});
  add("fc2.weight", {c, 2 * c}), add("fc2.bias", {c});
  add("fc3.weight", {c, c}), add("fc3.bias", {c});
  add("row", {c});
  GraphBuilder b(ck);
  int32_t x = linear(b, image_to_tokens(b, b.input("image", Shape{1, 3, h, w}), "embed"), "embed", 3, c);
  int32_t y = layer_norm(b, x, "ln", c, 1e-5f);
  y = linear(b, y, "fc1", c, 2 * c, true, Activation::kGeluErf);
  y = linear(b, y, "fc2", 2 * c, c);
  x = b.op(OpType::kAdd, NoAttrs{}, {x, y}, "residual");  // fused
  x = b.op(OpType::kAdd, NoAttrs{}, {linear(b, x, "fc3", c, c), b.weight("row")},
           "bias");  // broadcasts: kept
  b.mark_output(x);
  return finish_image_graph(b, h, w);
}

}  // namespace

TEST_CASE("fuse_epilogue: a residual Add after a Linear becomes the Linear's residual input, same outputs") {
  for (int64_t c : {13, 64, 100}) {
    CAPTURE(c);
    std::vector<uint8_t> storage;
    const auto model = load(build(5, 7, c), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto fused = session(model, backend, 3);
      auto written = session(model, backend, 3, "fuse_epilogue");
      int with_residual = 0;
      for (const Node& n : fused->graph().nodes)
        with_residual += n.type == OpType::kLinear && n.inputs.size() == 4 && n.inputs[3] != kAbsent;
      CHECK(with_residual == 1);
      CHECK(count(fused->graph(), OpType::kAdd) == 1);  // the broadcasting one
      CHECK(count(written->graph(), OpType::kAdd) == 2);
      check_same_outputs(*fused, *written, 3, 17, 1e-6);
    }
  }
}
