// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// channels_last_stem: the convolutional stem in front of the first tokens (SOFT's three 3×3 convs, the
// PVT v2 / LaViT 7×7 patch embedding, ViT's 16×16 one) ends in x.flatten(2).transpose(1,2). The chain of
// image-layout convs that feeds it runs channels-last instead: one Transpose [B,C,H,W] -> [B,H,W,C] of the
// chain's input (the RGB image: 3 channels, the smallest tensor of the chain), the convs with channels_last
// set, and a free Reshape to tokens at the end. The chain must start at a graph input. The final transpose
// disappears and every conv of the chain runs on the backend's channels-last GEMM, whose rows are the many
// pixels rather than the few output channels. Only dense and depthwise convs the backend supports
// channels-last join the chain.
#include <algorithm>

#include "planner/channels_last.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

Pattern stem_tail_pattern(bool bias) {
  return {"stem_tail",
          {{"conv", OpType::kConv2d, {"image", "weight", bias ? "bias" : ""}, is_nchw_conv},
           {"flat", OpType::kReshape, {"conv"}, reshape_is({0, 0, -1})},
           {"out", OpType::kTranspose, {"flat"}, perm_is({0, 2, 1})}},
          {}};
}

class ChannelsLastStemPass final : public Pass {
 public:
  const char* name() const override { return "channels_last_stem"; }
  const char* description() const override {
    return "image-layout conv chain ending in flatten+transpose to tokens -> channels-last convs";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const GraphIndex index(g);
    std::vector<bool> erase(g.nodes.size(), false);
    std::vector<std::vector<Node>> before(g.nodes.size());  // new nodes, placed before node i
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].type != OpType::kTranspose) continue;
      Match m;
      if (!match_first(g, index, patterns_, i, &m)) continue;
      // Walk back over image-layout convs whose only reader is the next conv of the chain.
      std::vector<size_t> chain{m.nodes.at("conv")};
      std::vector<Node> rewritten(1);
      if (!channels_last_form(g, g.nodes[chain[0]], ctx, &rewritten[0])) continue;
      for (;;) {
        const int32_t in = g.nodes[chain.front()].inputs[0];
        const int32_t p = index.producer[in];
        if (p < 0 || index.consumers[in] != 1 || is_graph_output(g, in)) break;
        const Node& prev = g.nodes[static_cast<size_t>(p)];
        if (prev.type != OpType::kConv2d || !is_nchw_conv(prev)) break;
        Node cl;
        if (!channels_last_form(g, prev, ctx, &cl)) break;
        chain.insert(chain.begin(), static_cast<size_t>(p));
        rewritten.insert(rewritten.begin(), std::move(cl));
      }
      // A stem starts at the model's image: a chain fed by anything else (tokens seen as an image) would only
      // trade one transpose for another.
      const int32_t image = g.nodes[chain.front()].inputs[0];
      if (std::find(g.inputs.begin(), g.inputs.end(), image) == g.inputs.end()) continue;
      const Shape& xs = g.tensors[image].shape;  // [B,C,H,W]
      if (xs.rank != 4 || xs[1] < 1 || xs[2] < 1 || xs[3] < 1) continue;
      Node to_nhwc;
      to_nhwc.type = OpType::kTranspose;
      to_nhwc.attrs = TransposeAttrs{{0, 2, 3, 1}};
      to_nhwc.inputs = {image};
      to_nhwc.name = g.nodes[chain.front()].name + ".nhwc";
      to_nhwc.outputs = {g.add_activation(to_nhwc.name, Shape{kDynamicDim, xs[2], xs[3], xs[1]})};
      int32_t x = to_nhwc.outputs[0];
      before[chain.front()].push_back(std::move(to_nhwc));
      for (size_t k = 0; k < chain.size(); ++k) {
        Node& cl = rewritten[k];
        const Shape& ys = g.tensors[g.nodes[chain[k]].outputs[0]].shape;  // [B,Cout,Ho,Wo]
        cl.inputs[0] = x;
        cl.outputs = {g.add_activation(cl.name + ".nhwc", Shape{kDynamicDim, ys[2], ys[3], ys[1]})};
        x = cl.outputs[0];
        erase[chain[k]] = true;
        before[chain[k]].push_back(std::move(cl));
      }
      const Shape& conv_out = g.tensors[x].shape;
      Node to_tokens;
      to_tokens.type = OpType::kReshape;
      to_tokens.attrs = ReshapeAttrs{{0, -1, conv_out[3]}};
      to_tokens.inputs = {x};
      to_tokens.outputs = {m.tensor("out")};
      to_tokens.name = g.nodes[i].name;
      erase[m.nodes.at("flat")] = erase[i] = true;
      before[i].push_back(std::move(to_tokens));
      *modified = true;
    }
    if (*modified) splice_nodes(g, erase, &before);
    return Status::Ok();
  }

 private:
  const Pattern patterns_[2] = {stem_tail_pattern(true), stem_tail_pattern(false)};
};

}  // namespace

std::unique_ptr<Pass> create_channels_last_stem_pass() {
  return std::make_unique<ChannelsLastStemPass>();
}

}  // namespace vitrt
