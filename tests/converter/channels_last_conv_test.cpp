// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The channels_last_conv pass on odd sizes: tokens -> image -> depthwise conv -> tokens -> GELU (the PVT v2 /
// LaViT MLP) becomes one channels-last conv with the GELU as its epilogue and no transpose, and gives the
// same outputs as the graph run as written, on every backend and batch; a dense conv between the same
// transposes is left alone.
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

struct Config {
  int64_t h, w, c, k, stride;
  bool bias, dense;
};

Graph build(const Config& k) {
  Checkpoint ck;
  uint32_t seed = 3;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    ck.tensors[name].shape = shape;
    ck.tensors[name].values = random_values(static_cast<size_t>(n), seed++, 0.4f);
  };
  add("fc.weight", {k.c, 3}), add("fc.bias", {k.c});
  add("conv.weight", {k.c, k.dense ? k.c : 1, k.k, k.k});
  if (k.bias) add("conv.bias", {k.c});
  GraphBuilder b(ck);
  int32_t x = b.input("image", Shape{1, 3, k.h, k.w});
  x = linear(b, image_to_tokens(b, x, "embed"), "fc", 3, k.c);
  x = tokens_to_image(b, x, k.h, k.w, "mlp");
  Conv2dAttrs a;
  a.stride_h = a.stride_w = static_cast<int32_t>(k.stride);
  a.pad_h = a.pad_w = static_cast<int32_t>(k.k / 2);
  a.groups = k.dense ? 1 : static_cast<int32_t>(k.c);
  std::vector<int32_t> in = {x, b.weight("conv.weight")};
  if (k.bias) in.push_back(b.weight("conv.bias"));
  x = b.op(OpType::kConv2d, a, in, "conv");
  x = image_to_tokens(b, x, "mlp");
  b.mark_output(gelu(b, x, GeluApproximation::kErf, "act"));
  Graph g;
  Status st = b.finish(&g);
  REQUIRE_MESSAGE(st.ok(), st.message());
  g.metadata.preprocess.crop_h = static_cast<int32_t>(k.h);
  g.metadata.preprocess.crop_w = static_cast<int32_t>(k.w);
  g.metadata.preprocess.resize_shorter = static_cast<int32_t>(std::min(k.h, k.w));
  return g;
}

}  // namespace

TEST_CASE("channels_last_conv: the MLP's depthwise conv runs on the tokens, same outputs as written") {
  const Config configs[] = {{7, 5, 37, 3, 1, true, false},  {9, 9, 64, 3, 1, true, false},
                            {6, 8, 19, 3, 2, false, false}, {5, 7, 33, 5, 1, true, false},
                            {4, 6, 100, 3, 1, true, false}, {6, 6, 12, 3, 1, true, true}};
  for (const Config& k : configs) {
    CAPTURE(k.h);
    CAPTURE(k.c);
    CAPTURE(k.dense);
    std::vector<uint8_t> storage;
    const auto model = load(build(k), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      const int64_t max_batch = 3;
      auto fused = session(model, backend, max_batch);
      auto written = session(model, backend, max_batch, "channels_last_conv");
      const Graph& g = fused->graph();
      // the input's own layout change stays; the two around the conv go unless the conv is dense
      CHECK(count(g, OpType::kTranspose) == (k.dense ? 3 : 1));
      CHECK(count(g, OpType::kGelu) == (k.dense ? 1 : 0));  // else the conv's epilogue, through the view
      bool channels_last = false;
      for (const Node& n : g.nodes)
        if (n.type == OpType::kConv2d) channels_last = std::get<Conv2dAttrs>(n.attrs).channels_last;
      CHECK(channels_last == !k.dense);
      CHECK(count(written->graph(), OpType::kTranspose) == 3);
      const std::vector<float> x = random_values(static_cast<size_t>(max_batch * 3 * k.h * k.w), 11, 1.5f);
      for (int64_t batch = 1; batch <= max_batch; ++batch) {
        const size_t n = static_cast<size_t>(fused->output_shape(batch).numel());
        std::vector<float> a(n, NAN), b(n, NAN);
        REQUIRE(fused->run(x.data(), batch, a.data(), n).ok());
        REQUIRE(written->run(x.data(), batch, b.data(), n).ok());
        double worst = 0, scale = 0;
        for (size_t i = 0; i < n; ++i) {
          REQUIRE(std::isfinite(a[i]));
          worst = std::max(worst, std::abs(double(a[i]) - b[i]));
          scale = std::max(scale, std::abs(double(b[i])));
        }
        CHECK(worst <= 2e-6 * scale);
      }
    }
  }
}
