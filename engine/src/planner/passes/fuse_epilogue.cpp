// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_epilogue: an activation (Gelu, Relu) whose only input comes from a Linear or Conv2d with no activation
// of its own, and that is that result's only reader, becomes the producer's epilogue — one pass over memory
// instead of two. A Reshape between them (a channels-last conv's result viewed as tokens) is looked through.
// Done only when the session's backend implements the fused form.
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
    return "Gelu/Relu after Linear/Conv2d -> the producer's epilogue";
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
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Pass> create_fuse_epilogue_pass() {
  return std::make_unique<FuseEpiloguePass>();
}

}  // namespace vitrt
