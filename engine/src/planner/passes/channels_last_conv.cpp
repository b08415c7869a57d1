// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// channels_last_conv: a Conv2d that sits between tokens->image and image->tokens layout changes
// (x.transpose(1,2).reshape(B,C,H,W) -> conv -> .flatten(2).transpose(1,2): the PVT v2 / LaViT MLP's
// depthwise conv, their spatial-reduction convs and the later stages' patch embeddings) runs on the tokens
// themselves, channels-last: [B,N,C] viewed as [B,H,W,C] by a free Reshape, the conv with channels_last set,
// and a free Reshape back. Both transposes (two full passes over the activations) disappear. Depthwise and
// dense convs are rewritten (the forms the backends implement channels-last), grouped ones are left alone,
// and only where the backend supports the channels-last conv.
#include "planner/graph_edit.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

bool nchw_conv(const Node& n) {
  return !std::get<Conv2dAttrs>(n.attrs).channels_last;
}

Pattern tokens_conv_pattern(bool bias) {
  return {"tokens_conv",
          {{"chw", OpType::kTranspose, {"tokens"}, perm_is({0, 2, 1})},
           {"image", OpType::kReshape, {"chw"}, reshape_is({0, 0, kAny, kAny})},
           {"conv", OpType::kConv2d, {"image", "weight", bias ? "bias" : ""}, nchw_conv},
           {"flat", OpType::kReshape, {"conv"}, reshape_is({0, 0, -1})},
           {"out", OpType::kTranspose, {"flat"}, perm_is({0, 2, 1})}},
          {}};
}

class ChannelsLastConvPass final : public Pass {
 public:
  const char* name() const override { return "channels_last_conv"; }
  const char* description() const override {
    return "depthwise or dense conv between token<->image transposes -> channels-last conv on the tokens";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const GraphIndex index(g);
    std::vector<bool> erase(g.nodes.size(), false);
    std::vector<std::vector<Node>> replace(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].type != OpType::kTranspose) continue;
      Match m;
      bool found = false;
      for (const Pattern& p : patterns_)
        if (!found && match_pattern(g, index, p, i, &m)) found = true;
      if (!found) continue;
      const Shape& tokens = g.tensors[m.tensor("tokens")].shape;  // [B,N,C]
      const Shape& w = g.tensors[m.tensor("weight")].shape;       // [C,1,kh,kw]
      const auto& image = std::get<ReshapeAttrs>(m.node(g, "image").attrs).shape;
      Conv2dAttrs a = std::get<Conv2dAttrs>(m.node(g, "conv").attrs);
      if (tokens.rank != 3 || w.rank != 4 || image[2] * image[3] != tokens[1]) continue;
      const int64_t c = tokens[2], cout = w[0];
      const bool depthwise = w[1] == 1 && w[0] == c && a.groups == c, dense = a.groups == 1 && w[1] == c;
      if (!depthwise && !dense) continue;
      const Shape& out = g.tensors[m.tensor("out")].shape;  // [B,No,C]
      a.channels_last = true;
      const Node& conv = m.node(g, "conv");
      Node view_in, cl, view_out;
      view_in.type = cl.type = view_out.type = OpType::kReshape;
      view_in.attrs = ReshapeAttrs{{0, image[2], image[3], c}};
      view_in.inputs = {m.tensor("tokens")};
      view_in.name = conv.name + ".nhwc";
      cl.type = OpType::kConv2d;
      cl.attrs = a;
      cl.inputs = conv.inputs;
      cl.name = conv.name;
      if (ctx.backend && !ctx.backend->supports(cl)) continue;
      const Shape& conv_out = g.tensors[conv.outputs[0]].shape;  // [B,C,Ho,Wo]
      view_in.outputs = {g.add_activation(view_in.name, Shape{kDynamicDim, image[2], image[3], c})};
      cl.inputs[0] = view_in.outputs[0];
      cl.outputs = {g.add_activation(cl.name + ".nhwc", Shape{kDynamicDim, conv_out[2], conv_out[3], cout})};
      view_out.attrs = ReshapeAttrs{{0, -1, cout}};
      view_out.inputs = {cl.outputs[0]};
      view_out.outputs = {m.tensor("out")};
      view_out.name = g.nodes[i].name;
      (void)out;
      for (const auto& kv : m.nodes) erase[kv.second] = true;
      replace[i] = {std::move(view_in), std::move(cl), std::move(view_out)};
      *modified = true;
    }
    if (!*modified) return Status::Ok();
    std::vector<Node> nodes;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (Node& n : replace[i]) nodes.push_back(std::move(n));
      if (!erase[i]) nodes.push_back(std::move(g.nodes[i]));
    }
    g.nodes = std::move(nodes);
    return Status::Ok();
  }

 private:
  const Pattern patterns_[2] = {tokens_conv_pattern(true), tokens_conv_pattern(false)};
};

}  // namespace

std::unique_ptr<Pass> create_channels_last_conv_pass() {
  return std::make_unique<ChannelsLastConvPass>();
}

}  // namespace vitrt
