// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_conv_mlp: the PVT v2 / LaViT MLP as channels_last_conv and fuse_epilogue leave it,
//   Linear fc1 -> Reshape [0,H,W,Ch] -> Conv2d (channels-last, depthwise, stride 1, "same" padding, act)
//   -> Reshape [0,-1,Ch] -> Linear fc2 (+ residual),
// becomes one ConvMlp op, so a backend can pipeline it by bands of image rows and keep the hidden activations
// (4-8x the tokens' width) in cache instead of writing and reading them twice. The three intermediate tensors
// must have no other reader and be no graph output; fc1 must have no residual of its own. Done only where the
// backend implements ConvMlp, and only where it pays: a pipelined kernel reads both weights (2·C·Ch floats)
// once per image, to save writing and reading the hidden tensor (N·Ch floats per image) through memory, so an
// image must hold at least 2·C tokens. PVT v2 and LaViT fuse their 56² and 28² stages; at 14² and 7² with
// C = 320 and 512 the op-by-op GEMMs, which read the weights once per batch, are as fast or faster (lavit b8,
// 2 threads: 8.4 vs 8.6 ms and 6.2 vs 5.7 ms per block fused vs not; 15.0 vs 24.6 ms at 56²).
#include "planner/graph_edit.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

class FuseConvMlpPass final : public Pass {
 public:
  const char* name() const override { return "fuse_conv_mlp"; }
  const char* description() const override {
    return "Linear -> channels-last depthwise conv (stride 1, same size) -> Linear -> one ConvMlp op";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const GraphIndex index(g);
    std::vector<bool> erase(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      int32_t chain[4];  // fc1, image view, conv, token view (fc2 is node i)
      if (!match(g, index, i, erase, chain)) continue;
      const Node& fc1 = g.nodes[chain[0]];
      const Node& conv = g.nodes[chain[2]];
      const Node& fc2 = g.nodes[i];
      const auto& ca = std::get<Conv2dAttrs>(conv.attrs);
      const Shape& image = g.tensors[conv.inputs[0]].shape;  // [B,H,W,Ch]
      Node fused;
      fused.type = OpType::kConvMlp;
      fused.name = fc1.name + "+" + conv.name + "+" + fc2.name;
      ConvMlpAttrs a;
      a.height = static_cast<int32_t>(image[1]);
      a.width = static_cast<int32_t>(image[2]);
      a.pad_h = ca.pad_h;
      a.pad_w = ca.pad_w;
      a.fc1_activation = std::get<LinearAttrs>(fc1.attrs).activation;
      a.dw_activation = ca.activation;
      a.fc2_activation = std::get<LinearAttrs>(fc2.attrs).activation;
      fused.attrs = a;
      auto input = [](const Node& n, size_t j) { return j < n.inputs.size() ? n.inputs[j] : kAbsent; };
      fused.inputs = {fc1.inputs[0],  fc1.inputs[1], input(fc1, 2), conv.inputs[1],
                      input(conv, 2), fc2.inputs[1], input(fc2, 2), input(fc2, 3)};
      while (fused.inputs.back() == kAbsent) fused.inputs.pop_back();
      fused.outputs = fc2.outputs;
      if (ctx.backend && !ctx.backend->supports(fused)) continue;
      for (int32_t n : chain) erase[n] = true;
      g.nodes[i] = std::move(fused);
      *modified = true;
    }
    if (*modified) erase_nodes(g, erase);
    return Status::Ok();
  }

 private:
  // Node i is the fc2 of a fusable MLP: chain[] gets the other four nodes, producers first.
  static bool match(const Graph& g, const GraphIndex& index, size_t i, const std::vector<bool>& erase,
                    int32_t* chain) {
    const Node& fc2 = g.nodes[i];
    if (fc2.type != OpType::kLinear || fc2.outputs.size() != 1 || fc2.inputs.size() < 2) return false;
    // Walks to the single-reader producer of `t` with type `type`.
    auto producer_of = [&](int32_t t, OpType type, int32_t* node) {
      if (t == kAbsent || index.consumers[t] != 1 || is_graph_output(g, t)) return false;
      *node = index.producer[t];
      return *node >= 0 && !erase[*node] && g.nodes[*node].type == type && g.nodes[*node].outputs.size() == 1;
    };
    if (!producer_of(fc2.inputs[0], OpType::kReshape, &chain[3]) ||
        !producer_of(g.nodes[chain[3]].inputs[0], OpType::kConv2d, &chain[2]))
      return false;
    const Node& conv = g.nodes[chain[2]];
    if (!producer_of(conv.inputs[0], OpType::kReshape, &chain[1]) ||
        !producer_of(g.nodes[chain[1]].inputs[0], OpType::kLinear, &chain[0]))
      return false;
    const Node& fc1 = g.nodes[chain[0]];
    if (fc1.inputs.size() > 3 && fc1.inputs[3] != kAbsent) return false;  // fc1 with a residual
    const auto& a = std::get<Conv2dAttrs>(conv.attrs);
    const Shape& tokens = g.tensors[fc1.inputs[0]].shape;   // [B,N,C]
    const Shape& hidden = g.tensors[fc1.outputs[0]].shape;  // [B,N,Ch]
    const Shape& image = g.tensors[conv.inputs[0]].shape;   // [B,H,W,Ch]
    const Shape& w = g.tensors[conv.inputs[1]].shape;       // [Ch,1,kh,kw]
    const Shape& mid = g.tensors[fc2.inputs[0]].shape;      // [B,N,Ch]
    const int64_t ch = hidden.rank == 3 ? hidden[2] : -1;
    return a.channels_last && a.groups == ch && tokens.rank == 3 && tokens[0] == hidden[0] &&
           tokens[1] == hidden[1] && image.rank == 4 && image[0] == hidden[0] && mid.rank == 3 &&
           mid[0] == hidden[0] && tokens[1] >= 2 * tokens[2] && a.stride_h == 1 && a.stride_w == 1 &&
           a.dilation_h == 1 && a.dilation_w == 1 && w.rank == 4 && w[0] == ch && w[1] == 1 &&
           w[2] == 2 * int64_t{a.pad_h} + 1 && w[3] == 2 * int64_t{a.pad_w} + 1 && tokens.rank == 3 &&
           image.rank == 4 && image[3] == ch && image[1] * image[2] == tokens[1] && mid.rank == 3 &&
           mid[1] == tokens[1] && mid[2] == ch && g.tensors[conv.outputs[0]].shape == image;
  }
};

}  // namespace

std::unique_ptr<Pass> create_fuse_conv_mlp_pass() {
  return std::make_unique<FuseConvMlpPass>();
}

}  // namespace vitrt
