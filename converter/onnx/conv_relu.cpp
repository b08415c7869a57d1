// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fold_conv_relu (graph_normalize.h). The conv's ReLU epilogue is max(0, x) on the conv's float32 result,
// which is what the separate Relu computes, so the values are the same (fuse_epilogue makes this same
// rewrite later in the planner; doing it here lets channels_last_conv and channels_last_stem, which run
// first, see the .pth route's Conv2d(ReLU)).
#include "onnx/graph_normalize.h"
#include "onnx/graph_rewrite.h"

namespace vitrt::convert {

Status fold_conv_relu(Graph* g, int* folded) {
  *folded = 0;
  const GraphUses uses(*g);
  std::vector<bool> erase(g->nodes.size(), false);
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const Node& relu = g->nodes[i];
    if (relu.type != OpType::kRelu || relu.inputs.size() != 1) continue;
    const int32_t x = relu.inputs[0];
    if (uses.readers[x] != 1 || !uses.producer_of(*g, x, OpType::kConv2d)) continue;
    Node& conv = g->nodes[static_cast<size_t>(uses.producer[x])];
    auto& a = std::get<Conv2dAttrs>(conv.attrs);
    if (a.activation != Activation::kNone) continue;
    a.activation = Activation::kRelu;
    conv.outputs[0] = relu.outputs[0];
    erase[i] = true;
    ++*folded;
  }
  if (*folded) splice_and_prune(*g, std::move(erase), std::vector<std::vector<Node>>(g->nodes.size()));
  return Status::Ok();
}

}  // namespace vitrt::convert
