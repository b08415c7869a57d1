// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// channels_last_conv: a Conv2d that sits between tokens->image and image->tokens layout changes
// (x.transpose(1,2).reshape(B,C,H,W) -> conv -> .flatten(2).transpose(1,2): the PVT v2 / LaViT MLP's
// depthwise conv, their spatial-reduction convs and the later stages' patch embeddings) runs on the tokens
// themselves, channels-last: [B,N,C] viewed as [B,H,W,C] by a free Reshape, the conv with channels_last set,
// and a free Reshape back. Both transposes (two full passes over the activations) disappear. Depthwise and
// dense convs are rewritten (the forms the backends implement channels-last), grouped ones are left alone,
// and only where the backend supports the channels-last conv. The tokens may also reach the image as
// x.reshape(B,H,W,C).permute(0,3,1,2) (PVT v2's stage ends, as torch.onnx.export writes them): the same
// element order, so the same rewrite.
#include "planner/channels_last.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

// The tokens [B,N,C] become the conv's image [B,C,H,W] by transpose(1,2).reshape(B,C,H,W) or, when
// `via_hwc`, by reshape(B,H,W,C).permute(0,3,1,2).
Pattern tokens_conv_pattern(bool via_hwc, bool bias) {
  std::vector<PatternOp> ops;
  if (via_hwc) {
    ops = {{"hwc", OpType::kReshape, {"tokens"}, reshape_is({0, kAny, kAny, kAny})},
           {"image", OpType::kTranspose, {"hwc"}, perm_is({0, 3, 1, 2})}};
  } else {
    ops = {{"chw", OpType::kTranspose, {"tokens"}, perm_is({0, 2, 1})},
           {"image", OpType::kReshape, {"chw"}, reshape_is({0, 0, kAny, kAny})}};
  }
  ops.insert(ops.end(), {{"conv", OpType::kConv2d, {"image", "weight", bias ? "bias" : ""}, is_nchw_conv},
                         {"flat", OpType::kReshape, {"conv"}, reshape_is({0, 0, -1})},
                         {"out", OpType::kTranspose, {"flat"}, perm_is({0, 2, 1})}});
  return {"tokens_conv", std::move(ops), {}};
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
      if (!match_first(g, index, patterns_, i, &m)) continue;
      const Shape& tokens = g.tensors[m.tensor("tokens")].shape;  // [B,N,C]
      const Shape& w = g.tensors[m.tensor("weight")].shape;       // [Cout,Cin/groups,kh,kw]
      const Shape image = g.tensors[m.tensor("image")].shape;     // [B,C,H,W], a copy (add_activation)
      // Both layout changes keep the token order (n = y·W + x) only when they neither mix C into H·W nor
      // the reverse: the image holds the tokens' C channels over H·W = N pixels.
      if (tokens.rank != 3 || w.rank != 4 || image.rank != 4 || image[1] != tokens[2] ||
          image[2] * image[3] != tokens[1])
        continue;
      const int64_t c = tokens[2], cout = w[0];
      const Node& conv = m.node(g, "conv");
      Node view_in, cl, view_out;
      if (!channels_last_form(g, conv, ctx, &cl)) continue;
      view_in.type = view_out.type = OpType::kReshape;
      view_in.attrs = ReshapeAttrs{{0, image[2], image[3], c}};
      view_in.inputs = {m.tensor("tokens")};
      view_in.name = conv.name + ".nhwc";
      // A copy: add_activation below may reallocate g.tensors.
      const Shape conv_out = g.tensors[conv.outputs[0]].shape;  // [B,C,Ho,Wo]
      view_in.outputs = {g.add_activation(view_in.name, Shape{kDynamicDim, image[2], image[3], c})};
      cl.inputs[0] = view_in.outputs[0];
      cl.outputs = {g.add_activation(cl.name + ".nhwc", Shape{kDynamicDim, conv_out[2], conv_out[3], cout})};
      view_out.attrs = ReshapeAttrs{{0, -1, cout}};
      view_out.inputs = {cl.outputs[0]};
      view_out.outputs = {m.tensor("out")};
      view_out.name = g.nodes[i].name;
      for (const auto& kv : m.nodes) erase[kv.second] = true;
      replace[i] = {std::move(view_in), std::move(cl), std::move(view_out)};
      *modified = true;
    }
    if (*modified) splice_nodes(g, erase, &replace);
    return Status::Ok();
  }

 private:
  const Pattern patterns_[4] = {tokens_conv_pattern(false, true), tokens_conv_pattern(false, false),
                                tokens_conv_pattern(true, true), tokens_conv_pattern(true, false)};
};

}  // namespace

std::unique_ptr<Pass> create_channels_last_conv_pass() {
  return std::make_unique<ChannelsLastConvPass>();
}

}  // namespace vitrt
