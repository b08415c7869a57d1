// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_epilogue: (1) an activation (Gelu, Relu) whose only input comes from a Linear or Conv2d with no
// activation of its own, and that is that result's only reader, becomes the producer's epilogue — one pass
// over memory instead of two. A Reshape between them (a channels-last conv's result viewed as tokens) is
// looked through. (2) A residual Add reading a Linear's only result becomes the Linear's residual input. Done
// only when the session's backend implements the fused form.
#include "planner/graph_edit.h"
#include "planner/pass.h"

namespace vitrt {
namespace {

bool activation_of(const Node& n, Activation* act) {
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
    return "Gelu/Relu after Linear/Conv2d, and a residual Add after Linear -> the producer's epilogue";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const std::vector<int> consumers = consumer_counts(g);
    std::vector<int32_t> producer(g.tensors.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int32_t o : g.nodes[i].outputs) producer[o] = static_cast<int32_t>(i);
    std::vector<bool> erase(g.nodes.size(), false);
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
      *slot = act;
      if (view < 0) fused.outputs[0] = g.nodes[i].outputs[0];
      fused.name = fused.name + "+" + (g.nodes[i].name.empty() ? "act" : g.nodes[i].name);
      if (ctx.backend && !ctx.backend->supports(fused)) continue;
      g.nodes[p] = std::move(fused);
      if (view >= 0) g.nodes[view].outputs[0] = g.nodes[i].outputs[0];  // the view now yields the result
      erase[i] = true;
      *modified = true;
    }
    if (*modified) erase_nodes(g, erase);
    fuse_residuals(g, ctx, modified);
    return Status::Ok();
  }

 private:
  // y = Add(Linear(...), r) with r ready before the Linear and of y's exact shape -> Linear(..., residual r):
  // the residual is added to each block of the product while it is in cache instead of in one more pass.
  static void fuse_residuals(Graph& g, const PassContext& ctx, bool* modified) {
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
        const int32_t lin = add.inputs[side], res = add.inputs[1 - side];
        const int32_t p = producer[lin];
        if (p < 0 || erase[p] || g.nodes[p].type != OpType::kLinear || g.nodes[p].outputs.size() != 1 ||
            g.nodes[p].inputs.size() > 3 || consumers[lin] != 1 || is_graph_output(g, lin) || lin == res ||
            g.tensors[lin].shape != out || g.tensors[res].shape != out || producer[res] >= p)
          continue;
        Node fused = g.nodes[p];
        fused.inputs.resize(3, kAbsent);
        fused.inputs.push_back(res);
        fused.outputs[0] = add.outputs[0];
        fused.name = fused.name + "+" + (add.name.empty() ? "residual" : add.name);
        if (ctx.backend && !ctx.backend->supports(fused)) continue;
        g.nodes[p] = std::move(fused);
        erase[i] = changed = true;
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
