// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_epilogue: (1) an activation (Gelu, Relu; for Conv2d also Unary Silu, HardSwish and Clip to [0, 6],
// EfficientNet's, MobileNetV3's and MobileNetV2's) whose only input comes from a Linear or Conv2d with no
// activation of its own, and that is that result's only reader, becomes the producer's epilogue — one pass
// over memory instead of two. A Reshape between them (a channels-last conv's result viewed as tokens) is
// looked through. (2) A residual Add reading a Linear's only result becomes the Linear's residual input
// (added after its activation). (3) A residual Add reading the only result of an NCHW, ungrouped Conv2d with
// no activation becomes the conv's residual input (added before its activation), and (1) then takes a Relu
// after it: ResNet's conv -> Add -> ReLU and the MobileNet/EfficientNet projection's conv -> Add become one
// conv. Done only when the session's backend implements the fused form.
#include "planner/graph_edit.h"
#include "planner/pass.h"

namespace vitrt {
namespace {

// The epilogue that computes node n's function of its one input, where there is one. A Unary's SiLU and
// HardSwish carry no parameters (alpha and beta are 0; the loader refuses others), so the kind is the whole
// function.
bool activation_of(const Node& n, Activation* act) {
  if (n.type == OpType::kUnary) {
    const UnaryAttrs& u = std::get<UnaryAttrs>(n.attrs);
    const UnaryKind kind = u.kind;
    if (kind == UnaryKind::kClip && u.alpha == 0.0f && u.beta == 6.0f) {  // ReLU6 (MobileNetV2)
      *act = Activation::kRelu6;
      return true;
    }
    if (kind != UnaryKind::kSilu && kind != UnaryKind::kHardSwish) return false;
    *act = kind == UnaryKind::kSilu ? Activation::kSilu : Activation::kHardSwish;
    return true;
  }
  if (n.type == OpType::kRelu) {
    *act = Activation::kRelu;
    return true;
  }
  if (n.type == OpType::kGelu) {
    *act = std::get<GeluAttrs>(n.attrs).approximation == GeluApproximation::kTanh ? Activation::kGeluTanh
                                                                                  : Activation::kGeluErf;
    return true;
  }
  return false;
}

Activation* epilogue_slot(Node& n) {
  if (n.type == OpType::kLinear) return &std::get<LinearAttrs>(n.attrs).activation;
  if (n.type == OpType::kConv2d) return &std::get<Conv2dAttrs>(n.attrs).activation;
  return nullptr;
}

class FuseEpiloguePass final : public Pass {
 public:
  const char* name() const override { return "fuse_epilogue"; }
  const char* description() const override {
    return "Gelu/Relu after Linear/Conv2d, Silu/HardSwish after Conv2d, and a residual Add after Linear or "
           "Conv2d -> the producer's epilogue";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    fuse_activations(g, ctx, modified);
    fuse_residuals(g, ctx, modified);
    bool conv_residuals = false;
    fuse_conv_residuals(g, ctx, &conv_residuals);
    if (conv_residuals) {
      *modified = true;
      fuse_activations(g, ctx, modified);  // the Relu after a conv that took the Add
    }
    return Status::Ok();
  }

 private:
  static void fuse_activations(Graph& g, const PassContext& ctx, bool* modified) {
    const std::vector<int> consumers = consumer_counts(g);
    std::vector<int32_t> producer(g.tensors.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int32_t o : g.nodes[i].outputs) producer[o] = static_cast<int32_t>(i);
    std::vector<bool> erase(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Activation act;
      if (!activation_of(g.nodes[i], &act)) continue;
      const int32_t mid = g.nodes[i].inputs[0];
      int32_t p = producer[mid];
      if (p < 0 || erase[p] || consumers[mid] != 1 || is_graph_output(g, mid)) continue;
      int32_t view = -1;  // a Reshape between the producer and the activation
      if (g.nodes[p].type == OpType::kReshape) {
        const int32_t src = g.nodes[p].inputs[0];
        view = p;
        p = producer[src];
        if (p < 0 || erase[p] || consumers[src] != 1 || is_graph_output(g, src)) continue;
      }
      Node fused = g.nodes[p];
      Activation* slot = epilogue_slot(fused);
      if (!slot || *slot != Activation::kNone || fused.outputs.size() != 1) continue;
      // A Linear's residual is added after its activation: an activation after the sum is not its epilogue.
      if (fused.type == OpType::kLinear && fused.inputs.size() > 3 && fused.inputs[3] != kAbsent) continue;
      // SiLU, HardSwish and ReLU6 only as Conv2d epilogues: Linear's kernels (and CUDA's) have none.
      if ((act == Activation::kSilu || act == Activation::kHardSwish || act == Activation::kRelu6) &&
          fused.type != OpType::kConv2d)
        continue;
      *slot = act;
      if (view < 0) fused.outputs[0] = g.nodes[i].outputs[0];
      fused.name = fused.name + "+" + (g.nodes[i].name.empty() ? "act" : g.nodes[i].name);
      if (ctx.backend && !ctx.backend->supports(fused)) continue;
      g.nodes[p] = std::move(fused);
      if (view >= 0) g.nodes[view].outputs[0] = g.nodes[i].outputs[0];  // the view now yields the result
      erase[i] = changed = true;
    }
    if (changed) {
      erase_nodes(g, erase);
      *modified = true;
    }
  }

  // y = Add(Linear(...), r) with r ready before the Linear and of y's exact shape -> Linear(..., residual r):
  // the residual is added to each block of the product while it is in cache instead of in one more pass.
  static void fuse_residuals(Graph& g, const PassContext& ctx, bool* modified) {
    fuse_add_into_producer(g, ctx, OpType::kLinear, /*at_add=*/false, nullptr, modified);
  }

  // y = Add(Conv2d(...), r), the conv NCHW, ungrouped, with no activation, its result read by the Add alone
  // and of y's exact shape as r is -> Conv2d(..., residual r), placed where the Add was: r may be computed
  // after the conv (ResNet's downsample branch), and the conv's own inputs are all ready before the Add.
  static void fuse_conv_residuals(Graph& g, const PassContext& ctx, bool* modified) {
    fuse_add_into_producer(
        g, ctx, OpType::kConv2d, /*at_add=*/true,
        [](const Node& conv, const Shape& out) {
          const Conv2dAttrs& a = std::get<Conv2dAttrs>(conv.attrs);
          return out.rank == 4 && !a.channels_last && a.groups == 1 && a.activation == Activation::kNone;
        },
        modified);
  }

  // The shared rewrite of the two above: Add(x, r) where x is the single-reader, non-output result of a
  // `type` node with no residual yet and both operands have the Add's exact shape becomes that node with r
  // as its fourth input, writing the Add's result. at_add: the fused node takes the Add's place (r may be
  // computed after the producer); otherwise the producer's, and r must be ready before it.
  static void fuse_add_into_producer(Graph& g, const PassContext& ctx, OpType type, bool at_add,
                                     bool (*eligible)(const Node&, const Shape&), bool* modified) {
    const std::vector<int> consumers = consumer_counts(g);
    std::vector<int32_t> producer(g.tensors.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int32_t o : g.nodes[i].outputs) producer[o] = static_cast<int32_t>(i);
    std::vector<bool> erase(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& add = g.nodes[i];
      if (add.type != OpType::kAdd || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
      const Shape& out = g.tensors[add.outputs[0]].shape;
      for (int side = 0; side < 2; ++side) {
        const int32_t x = add.inputs[side], res = add.inputs[1 - side];
        const int32_t p = producer[x];
        if (p < 0 || erase[p] || g.nodes[p].type != type || g.nodes[p].outputs.size() != 1 ||
            g.nodes[p].inputs.size() > 3 || consumers[x] != 1 || is_graph_output(g, x) || x == res ||
            g.tensors[x].shape != out || g.tensors[res].shape != out || (!at_add && producer[res] >= p) ||
            (eligible && !eligible(g.nodes[p], out)))
          continue;
        Node fused = g.nodes[p];
        fused.inputs.resize(3, kAbsent);
        fused.inputs.push_back(res);
        fused.outputs[0] = add.outputs[0];
        fused.name = fused.name + "+" + (add.name.empty() ? "residual" : add.name);
        if (ctx.backend && !ctx.backend->supports(fused)) continue;
        g.nodes[at_add ? i : p] = std::move(fused);
        erase[at_add ? p : i] = changed = true;
        break;
      }
    }
    if (changed) {
      erase_nodes(g, erase);
      *modified = true;
    }
  }
};

}  // namespace

std::unique_ptr<Pass> create_fuse_epilogue_pass() {
  return std::make_unique<FuseEpiloguePass>();
}

}  // namespace vitrt
