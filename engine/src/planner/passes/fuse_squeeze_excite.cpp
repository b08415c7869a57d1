// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_squeeze_excite: a squeeze-and-excitation block (SENet; the SE blocks of SE-ResNet, MobileNetV3 and
// EfficientNet) written as plain ops,
//   s = AdaptiveAvgPool2d(1)(x) or ReduceMean over H, W (keepdims)    [B,C,1,1]
//   h = act(Conv2d 1x1 (s))              act: Relu (also as the conv's epilogue) or Unary Silu
//   g = gate(Conv2d 1x1 (h))             gate: Unary Sigmoid or HardSigmoid
//   y = Mul(x, g) or Mul(g, x)
// or its vector form (s viewed as [B,C] by a Reshape, or a ReduceMean without keepdims; Linear layers; g
// viewed back as [B,C,1,1] by a Reshape), g possibly broadcast to x's shape by an Expand first (SENet's
// x * y.expand_as(x)), becomes one SqueezeExcite op: the backend reads x twice (the mean,
// then the scale) in one kernel and skips five small ops. Every intermediate tensor must have no reader
// outside the block and be no graph output, the pooled tensor must come from the same x the Mul scales, and
// every shape must be exactly the block's ([B,C,1,1] or [B,C], [B,Cr,...], weights [Cr,C] / [C,Cr]); anything
// else is left alone. Done only where the session's backend implements SqueezeExcite.
#include <set>

#include "ops/op_registry.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

// The block found behind one Mul, producers first.
struct SeBlock {
  int32_t x = kAbsent;         // the scaled input [B,C,H,W]
  std::vector<int32_t> nodes;  // every node the fused op replaces but the Mul
  int32_t fc1 = -1, fc2 = -1;  // their node indices
  SqueezeExciteAttrs attrs;
};

class FuseSqueezeExcitePass final : public Pass {
 public:
  const char* name() const override { return "fuse_squeeze_excite"; }
  const char* description() const override {
    return "global average pool -> 1x1 conv / Linear -> Relu/Silu -> 1x1 conv / Linear -> "
           "Sigmoid/HardSigmoid "
           "-> Mul -> one SqueezeExcite op";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const GraphIndex index(g);
    std::vector<bool> erase(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& mul = g.nodes[i];
      if (mul.type != OpType::kMul || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
      SeBlock se;
      if (!match(g, index, erase, mul, 1, &se) && !match(g, index, erase, mul, 0, &se)) continue;
      const Node& fc1 = g.nodes[se.fc1];
      const Node& fc2 = g.nodes[se.fc2];
      auto input = [](const Node& n, size_t j) { return j < n.inputs.size() ? n.inputs[j] : kAbsent; };
      Node fused;
      fused.type = OpType::kSqueezeExcite;
      fused.name = fc1.name + "+" + fc2.name + "+" + mul.name;
      fused.attrs = se.attrs;
      fused.inputs = {se.x, fc1.inputs[1], input(fc1, 2), fc2.inputs[1], input(fc2, 2)};
      while (fused.inputs.back() == kAbsent) fused.inputs.pop_back();
      fused.outputs = mul.outputs;
      if (ctx.backend && !ctx.backend->supports(fused)) continue;
      for (int32_t n : se.nodes) erase[n] = true;
      g.nodes[i] = std::move(fused);
      *modified = true;
    }
    if (*modified) erase_nodes(g, erase);
    return Status::Ok();
  }

 private:
  // Tries the Mul with its gate at operand `gate_operand` and x at the other.
  static bool match(const Graph& g, const GraphIndex& index, const std::vector<bool>& erase, const Node& mul,
                    int gate_operand, SeBlock* se) {
    *se = SeBlock{};
    se->x = mul.inputs[1 - gate_operand];
    const Shape& xs = g.tensors[se->x].shape;
    if (xs.rank != 4 || g.tensors[mul.outputs[0]].shape != xs) return false;
    const int64_t b = xs[0], c = xs[1];
    const Shape image_vec{b, c, 1, 1}, flat_vec{b, c};
    // The single-reader producer of `t` (none outside the block, no graph output), of type `type`.
    auto producer = [&](int32_t t, OpType type, int32_t* node) {
      if (t == kAbsent || index.consumers[t] != 1 || is_graph_output(g, t)) return false;
      const int32_t p = index.producer[t];
      if (p < 0 || erase[p] || g.nodes[p].type != type || g.nodes[p].outputs.size() != 1) return false;
      *node = p;
      se->nodes.push_back(p);
      return true;
    };
    auto shape_of = [&](int32_t t) -> const Shape& { return g.tensors[t].shape; };

    // The gate, broadcast to x's shape first in SENet's x * y.expand_as(x), viewed back as [B,C,1,1] when the
    // layers ran on vectors.
    int32_t t = mul.inputs[gate_operand], n = -1;
    const int32_t expand_producer = index.producer[t];
    if (expand_producer >= 0 && g.nodes[expand_producer].type == OpType::kExpand) {
      if (shape_of(t) != xs || !producer(t, OpType::kExpand, &n)) return false;
      t = g.nodes[n].inputs[0];
    }
    if (shape_of(t) != image_vec) return false;
    const int32_t gate_producer = index.producer[t];
    const bool vector_form = gate_producer >= 0 && g.nodes[gate_producer].type == OpType::kReshape;
    if (vector_form) {
      if (!producer(t, OpType::kReshape, &n)) return false;
      t = g.nodes[n].inputs[0];
    }
    const Shape& vec = vector_form ? flat_vec : image_vec;
    if (shape_of(t) != vec || !producer(t, OpType::kUnary, &n)) return false;
    const auto& gate = std::get<UnaryAttrs>(g.nodes[n].attrs);
    if (gate.kind == UnaryKind::kSigmoid) {
      se->attrs.gate = ExciteGate::kSigmoid;
    } else if (gate.kind == UnaryKind::kHardSigmoid) {
      se->attrs.gate = ExciteGate::kHardSigmoid;
      se->attrs.gate_alpha = gate.alpha;
      se->attrs.gate_beta = gate.beta;
    } else {
      return false;
    }
    // fc2: [.., Cr] -> [.., C], no activation of its own.
    t = g.nodes[n].inputs[0];
    Activation fc2_act;
    if (shape_of(t) != vec || !fc(g, producer, t, vector_form, &se->fc2, &fc2_act) ||
        fc2_act != Activation::kNone)
      return false;
    const Shape& w2 = shape_of(g.nodes[se->fc2].inputs[1]);
    const int64_t cr = w2[1];
    // The activation between the layers: a node of its own, or fc1's Relu epilogue.
    t = g.nodes[se->fc2].inputs[0];
    Shape hidden = vec;
    hidden[1] = cr;
    if (shape_of(t) != hidden) return false;
    const int32_t act_producer = index.producer[t];
    bool act_node = false;
    if (act_producer >= 0 && g.nodes[act_producer].type == OpType::kRelu) {
      if (!producer(t, OpType::kRelu, &n)) return false;
      se->attrs.activation = SqueezeActivation::kRelu;
      act_node = true;
    } else if (act_producer >= 0 && g.nodes[act_producer].type == OpType::kUnary) {
      if (std::get<UnaryAttrs>(g.nodes[act_producer].attrs).kind != UnaryKind::kSilu ||
          !producer(t, OpType::kUnary, &n))
        return false;
      se->attrs.activation = SqueezeActivation::kSilu;
      act_node = true;
    }
    if (act_node) {
      t = g.nodes[n].inputs[0];
      if (shape_of(t) != hidden) return false;
    }
    // fc1: [.., C] -> [.., Cr].
    Activation fc1_act;
    if (!fc(g, producer, t, vector_form, &se->fc1, &fc1_act)) return false;
    if (act_node ? fc1_act != Activation::kNone : fc1_act != Activation::kRelu) return false;
    if (!act_node) se->attrs.activation = SqueezeActivation::kRelu;
    const Shape& w1 = shape_of(g.nodes[se->fc1].inputs[1]);
    if (w1[0] != cr || w1[1] != c || w2[0] != c) return false;
    // The squeeze: the mean of x over H and W, as [B,C,1,1] (viewed as [B,C] in the vector form) or [B,C].
    t = g.nodes[se->fc1].inputs[0];
    if (shape_of(t) != vec) return false;
    const int32_t pool_producer = index.producer[t];
    if (vector_form && pool_producer >= 0 && g.nodes[pool_producer].type == OpType::kReshape) {
      if (!producer(t, OpType::kReshape, &n)) return false;
      t = g.nodes[n].inputs[0];
      if (shape_of(t) != image_vec) return false;
    }
    const int32_t p = index.producer[t];
    if (p < 0) return false;
    const Node& pool = g.nodes[p];
    if (pool.type == OpType::kAdaptiveAvgPool2d) {
      const auto& a = std::get<AdaptiveAvgPool2dAttrs>(pool.attrs);
      if (a.out_h != 1 || a.out_w != 1 || !producer(t, OpType::kAdaptiveAvgPool2d, &n)) return false;
    } else if (pool.type == OpType::kReduceMean) {
      if (!mean_over_hw(pool) || !producer(t, OpType::kReduceMean, &n)) return false;
    } else {
      return false;
    }
    return g.nodes[n].inputs[0] == se->x;
  }

  // The single-reader producer of `t` is a fully connected layer of the block's form: a 1x1 Conv2d (groups
  // 1, no padding, channels first) on [B,Ci,1,1], or a Linear without a residual on [B,Ci]. Its weight's
  // shape is checked by the caller.
  template <class Producer>
  static bool fc(const Graph& g, Producer& producer, int32_t t, bool vector_form, int32_t* node,
                 Activation* act) {
    if (!producer(t, vector_form ? OpType::kLinear : OpType::kConv2d, node)) return false;
    const Node& n = g.nodes[*node];
    if (n.inputs.size() < 2 || n.inputs[1] == kAbsent) return false;
    const Shape& w = g.tensors[n.inputs[1]].shape;
    if (vector_form) {
      if (n.inputs.size() > 3 && n.inputs[3] != kAbsent) return false;  // a residual
      *act = std::get<LinearAttrs>(n.attrs).activation;
      return w.rank == 2;
    }
    const auto& a = std::get<Conv2dAttrs>(n.attrs);
    *act = a.activation;
    return !a.channels_last && a.groups == 1 && a.pad_h == 0 && a.pad_w == 0 && w.rank == 4 && w[2] == 1 &&
           w[3] == 1;
  }

  // ReduceMean over exactly axes 2 and 3 of a [B,C,H,W] tensor.
  static bool mean_over_hw(const Node& n) {
    const auto& a = std::get<ReduceMeanAttrs>(n.attrs);
    std::set<int> axes;
    for (int32_t ax : a.axes) {
      int k;
      if (!normalize_axis(ax, 4, &k)) return false;
      axes.insert(k);
    }
    return a.axes.size() == 2 && axes == std::set<int>{2, 3};
  }
};

}  // namespace

std::unique_ptr<Pass> create_fuse_squeeze_excite_pass() {
  return std::make_unique<FuseSqueezeExcitePass>();
}

}  // namespace vitrt
