// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "ir/shape_propagation.h"

#include "ops/op_registry.h"

namespace vitrt {

Status propagate_shapes(const Graph& graph, int64_t batch, Shape* shapes) {
  for (size_t i = 0; i < graph.tensors.size(); ++i)
    if (graph.tensors[i].is_constant) shapes[i] = graph.tensors[i].shape;
  for (int32_t in : graph.inputs) {
    Shape s = graph.tensors[in].shape;
    for (int d = 0; d < s.rank; ++d)
      if (s[d] == kDynamicDim) s[d] = batch;
    const std::string why = shape_violation(s);
    if (!why.empty())
      return bad_input("graph input '" + graph.tensors[in].name + "' at batch " + std::to_string(batch) +
                       ": " + why);
    shapes[in] = s;
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const Shape* src[kMaxOpInputs] = {};
    const int num_src = static_cast<int>(node.inputs.size());
    for (int i = 0; i < num_src; ++i) src[i] = node.inputs[i] == kAbsent ? nullptr : &shapes[node.inputs[i]];
    Shape dst[kMaxOpOutputs];
    Status st = infer_node_shapes(node, src, num_src, dst);
    if (!st.ok()) return st.with_context(describe_node(node, n));
    for (size_t o = 0; o < node.outputs.size(); ++o) shapes[node.outputs[o]] = dst[o];
  }
  return Status::Ok();
}

Status resolve_activation_shapes(Graph* graph) {
  const size_t nt = graph->tensors.size();
  std::vector<Shape> s1(nt), s2(nt);
  VITRT_RETURN_IF_ERROR(propagate_shapes(*graph, 1, s1.data()));
  VITRT_RETURN_IF_ERROR(propagate_shapes(*graph, 2, s2.data()));
  std::vector<bool> produced(nt, false);
  for (const Node& n : graph->nodes)
    for (int32_t o : n.outputs) produced[o] = true;
  for (size_t i = 0; i < nt; ++i) {
    Tensor& t = graph->tensors[i];
    if (!produced[i]) continue;
    if (s1[i].rank != s2[i].rank) return bad_model("tensor '" + t.name + "': rank depends on the batch size");
    Shape resolved = s1[i];
    for (int d = 0; d < resolved.rank; ++d)
      if (s1[i][d] != s2[i][d]) resolved[d] = kDynamicDim;
    if (t.shape.rank > 0 && t.shape != resolved)
      return bad_model("tensor '" + t.name + "': declared shape " + t.shape.str() + " but the ops produce " +
                       resolved.str());
    t.shape = resolved;
  }
  return Status::Ok();
}

}  // namespace vitrt
