// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The channels_last_conv pass on odd sizes: tokens -> image -> depthwise or dense conv -> tokens -> GELU (the
// PVT v2 / LaViT MLP, spatial reduction, patch embedding) becomes one channels-last conv with the GELU as its
// epilogue and no transpose, and gives the same outputs as the graph run as written, on every backend and
// batch; a grouped conv between the same transposes is left alone. The tokens may also reach the image as
// reshape(B,H,W,C).permute(0,3,1,2) (torch.onnx.export's form of PVT v2's stage ends); a reshape that splits
// the channels into the image's rows is a different order and is left alone.
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
  bool bias;
  int64_t groups;    // 0: depthwise
  int64_t cout = 0;  // dense and grouped: output channels
  int64_t pad = -1;  // -1: k / 2
  // 0: transpose(1,2).reshape(B,C,H,W); 1: reshape(B,H,W,C).permute(0,3,1,2); 2: reshape(B,H,W·C/c2,c2)
  // .permute(0,3,1,2) with c2 = `cout` channels (not the tokens' order: never rewritten)
  int to_image = 0;
  bool rewritten() const { return groups <= 1 && to_image != 2; }
};

Graph build(const Config& k) {
  Checkpoint ck;
  uint32_t seed = 3;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    add_random(&ck, name, std::move(shape), seed++);
  };
  add("fc.weight", {k.c, 3}), add("fc.bias", {k.c});
  const int64_t cin = k.to_image == 2 ? k.cout : k.c;
  const int64_t cout = k.groups == 0 ? cin : k.cout;
  add("conv.weight", {cout, k.groups == 0 ? 1 : cin / k.groups, k.k, k.k});
  if (k.bias) add("conv.bias", {cout});
  GraphBuilder b(ck);
  int32_t x = b.input("image", Shape{1, 3, k.h, k.w});
  x = linear(b, image_to_tokens(b, x, "embed"), "fc", 3, k.c);
  if (k.to_image == 0) {
    x = tokens_to_image(b, x, k.h, k.w, "mlp");
  } else {
    const int64_t w = k.to_image == 1 ? k.w : k.w * k.c / cin;
    x = b.op(OpType::kReshape, ReshapeAttrs{{0, k.h, w, cin}}, {x}, "mlp.to_hwc");
    x = b.op(OpType::kTranspose, TransposeAttrs{{0, 3, 1, 2}}, {x}, "mlp.to_image");
  }
  Conv2dAttrs a;
  a.stride_h = a.stride_w = static_cast<int32_t>(k.stride);
  a.pad_h = a.pad_w = static_cast<int32_t>(k.pad < 0 ? k.k / 2 : k.pad);
  a.groups = static_cast<int32_t>(k.groups == 0 ? cin : k.groups);
  std::vector<int32_t> in = {x, b.weight("conv.weight")};
  if (k.bias) in.push_back(b.weight("conv.bias"));
  x = b.op(OpType::kConv2d, a, in, "conv");
  x = image_to_tokens(b, x, "mlp");
  b.mark_output(gelu(b, x, GeluApproximation::kErf, "act"));
  return finish_image_graph(b, k.h, k.w);
}

}  // namespace

TEST_CASE("channels_last_conv: the MLP's depthwise conv runs on the tokens, same outputs as written") {
  const Config configs[] = {{7, 5, 37, 3, 1, true, 0},           {9, 9, 64, 3, 1, true, 0},
                            {6, 8, 19, 3, 2, false, 0},          {5, 7, 33, 5, 1, true, 0},
                            {4, 6, 100, 3, 1, true, 0},          {6, 6, 12, 3, 1, true, 1, 12},
                            {8, 12, 20, 4, 4, true, 1, 17, 0},   {9, 7, 13, 3, 2, false, 1, 29},
                            {5, 6, 11, 1, 1, true, 1, 7, 0},     {6, 6, 12, 3, 1, true, 2, 12},
                            {7, 5, 37, 3, 1, true, 0, 0, -1, 1}, {6, 8, 19, 3, 2, false, 1, 23, -1, 1},
                            {4, 4, 10, 3, 1, true, 1, 5, -1, 2}, {6, 4, 6, 3, 1, true, 0, 3, -1, 2}};
  for (const Config& k : configs) {
    CAPTURE(k.h);
    CAPTURE(k.c);
    CAPTURE(k.groups);
    CAPTURE(k.cout);
    CAPTURE(k.to_image);
    std::vector<uint8_t> storage;
    const auto model = load(build(k), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      const int64_t max_batch = 3;
      auto fused = session(model, backend, max_batch);
      auto written = session(model, backend, max_batch, "channels_last_conv");
      const Graph& g = fused->graph();
      // the input's own layout change stays; the two around the conv go unless the conv is grouped
      CHECK(count(g, OpType::kTranspose) == (k.rewritten() ? 1 : 3));
      CHECK(count(g, OpType::kGelu) ==
            (k.rewritten() ? 0 : 1));  // else the conv's epilogue, through the view
      bool channels_last = false;
      for (const Node& n : g.nodes)
        if (n.type == OpType::kConv2d) channels_last = std::get<Conv2dAttrs>(n.attrs).channels_last;
      CHECK(channels_last == k.rewritten());
      CHECK(count(written->graph(), OpType::kTranspose) == 3);
      check_same_outputs(*fused, *written, max_batch, 11, 2e-6);
    }
  }
}
