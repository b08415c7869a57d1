// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The channels_last_stem pass on odd sizes: image -> a chain of convs (SOFT's 3-conv stem, a 7×7 patch
// embedding, ViT's k = stride one) -> flatten + transpose to tokens becomes one transpose of the image and
// channels-last convs, and gives the same outputs as the graph run as written, on every backend and batch.
// Chains that do not start at the image (a grouped conv the backend has no channels-last form of in the
// middle, another op between the image and the first conv) are left alone.
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

struct StemConv {
  int64_t cout, k, stride, pad, groups = 1;
  bool bias = true;
  Activation act = Activation::kRelu;
};

struct Config {
  const char* name;
  int64_t h, w;
  std::vector<StemConv> convs;
  bool image_op = false;  // an op between the image and the first conv
  bool rewritten;
};

Graph build(const Config& k) {
  Checkpoint ck;
  uint32_t seed = 5;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    add_random(&ck, name, std::move(shape), seed++);
  };
  int64_t cin = 3;
  for (size_t i = 0; i < k.convs.size(); ++i) {
    const StemConv& c = k.convs[i];
    add("stem." + std::to_string(i) + ".weight", {c.cout, cin / c.groups, c.k, c.k});
    if (c.bias) add("stem." + std::to_string(i) + ".bias", {c.cout});
    cin = c.cout;
  }
  GraphBuilder b(ck);
  int32_t x = b.input("image", Shape{1, 3, k.h, k.w});
  if (k.image_op) x = gelu(b, x, GeluApproximation::kTanh, "pre");
  for (size_t i = 0; i < k.convs.size(); ++i) {
    const StemConv& c = k.convs[i];
    Conv2dAttrs a;
    a.stride_h = a.stride_w = static_cast<int32_t>(c.stride);
    a.pad_h = a.pad_w = static_cast<int32_t>(c.pad);
    a.groups = static_cast<int32_t>(c.groups);
    a.activation = c.act;
    const std::string name = "stem." + std::to_string(i);
    std::vector<int32_t> in = {x, b.weight(name + ".weight")};
    if (c.bias) in.push_back(b.weight(name + ".bias"));
    x = b.op(OpType::kConv2d, a, in, name);
  }
  x = image_to_tokens(b, x, "stem");
  b.mark_output(gelu(b, x, GeluApproximation::kErf, "act"));
  return finish_image_graph(b, k.h, k.w);
}

int channels_last_convs(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes)
    if (node.type == OpType::kConv2d) n += std::get<Conv2dAttrs>(node.attrs).channels_last;
  return n;
}

}  // namespace

TEST_CASE(
    "channels_last_stem: the conv chain from the image to the tokens runs channels-last, same outputs") {
  const Config configs[] = {
      {"soft_stem", 29, 23, {{8, 3, 2, 1}, {8, 3, 1, 1}, {13, 3, 2, 1}}, false, true},
      {"patch7_s4", 31, 26, {{19, 7, 4, 3, 1, true, Activation::kNone}}, false, true},
      {"vit_patch", 32, 48, {{24, 16, 16, 0, 1, false, Activation::kNone}}, false, true},
      {"odd_pad_no_bias", 9, 11, {{5, 5, 1, 2, 1, false}, {7, 2, 2, 0}}, false, true},
      {"grouped_middle", 17, 15, {{6, 3, 2, 1}, {6, 3, 1, 1, 3}, {10, 3, 2, 1}}, false, false},
      {"op_before_chain", 17, 15, {{6, 3, 2, 1}, {10, 3, 2, 1}}, true, false},
  };
  for (const Config& k : configs) {
    const std::string name = k.name;
    CAPTURE(name);
    std::vector<uint8_t> storage;
    const auto model = load(build(k), &storage);
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      const int64_t max_batch = 3;
      auto fused = session(model, backend, max_batch);
      auto written = session(model, backend, max_batch, "channels_last_stem");
      const Graph& g = fused->graph();
      // Rewritten: the image's transpose replaces the tokens' one, and every conv is channels-last.
      CHECK(count(g, OpType::kTranspose) == 1);
      CHECK(count(written->graph(), OpType::kTranspose) == 1);
      CHECK(channels_last_convs(g) == (k.rewritten ? static_cast<int>(k.convs.size()) : 0));
      CHECK(channels_last_convs(written->graph()) == 0);
      if (k.rewritten) CHECK(g.nodes.front().type == OpType::kTranspose);
      check_same_outputs(*fused, *written, max_batch, 13, 2e-6);
    }
  }
}
