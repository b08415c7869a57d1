// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/graph_rewrite.h"

#include <cmath>

#include "ops/op_registry.h"

namespace vitrt::convert {

GraphUses::GraphUses(const Graph& g)
    : producer(g.tensors.size(), -1), readers(g.tensors.size(), 0), reader(g.tensors.size(), -1) {
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int32_t i : g.nodes[n].inputs)
      if (i != kAbsent) {
        ++readers[i];
        reader[i] = static_cast<int32_t>(n);
      }
    for (int32_t o : g.nodes[n].outputs) producer[o] = static_cast<int32_t>(n);
  }
  for (int32_t o : g.outputs) ++readers[o];
}

const Node* GraphUses::producer_of(const Graph& g, int32_t t, OpType type) const {
  if (t < 0 || static_cast<size_t>(t) >= producer.size() || producer[t] < 0) return nullptr;
  const Node& n = g.nodes[producer[t]];
  return n.type == type ? &n : nullptr;
}

Node make_node(OpType type, OpAttrs attrs, std::vector<int32_t> inputs, int32_t output, std::string name) {
  Node n;
  n.type = type;
  n.version = lowest_op_version(type, attrs);
  n.attrs = std::move(attrs);
  n.inputs = std::move(inputs);
  n.outputs = {output};
  n.name = std::move(name);
  return n;
}

namespace {

void drop_unreferenced_tensors(Graph& g) {
  std::vector<int32_t> index(g.tensors.size(), -1);
  auto keep = [&](int32_t t) {
    if (t != kAbsent) index[t] = 0;
  };
  for (const Node& n : g.nodes) {
    for (int32_t t : n.inputs) keep(t);
    for (int32_t t : n.outputs) keep(t);
  }
  for (int32_t t : g.inputs) keep(t);
  for (int32_t t : g.outputs) keep(t);
  std::vector<Tensor> kept;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (index[t] < 0) continue;
    index[t] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(g.tensors[t]));
  }
  if (kept.size() == g.tensors.size()) {
    g.tensors = std::move(kept);
    return;
  }
  auto remap = [&](std::vector<int32_t>& ts) {
    for (int32_t& t : ts)
      if (t != kAbsent) t = index[t];
  };
  for (Node& n : g.nodes) {
    remap(n.inputs);
    remap(n.outputs);
  }
  remap(g.inputs);
  remap(g.outputs);
  g.tensors = std::move(kept);
}

}  // namespace

void splice_and_prune(Graph& g, std::vector<bool> erase, std::vector<std::vector<Node>> before) {
  // Readers as they will be once the flagged nodes are gone and the new ones are in.
  GraphUses uses(g);
  std::vector<int> readers = uses.readers;
  std::vector<size_t> work;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (const Node& added : before[n])
      for (int32_t i : added.inputs)
        if (i != kAbsent) ++readers[i];
    if (erase[n]) work.push_back(n);
  }
  // A dropped node's inputs lose a reader; a producer left with none is dropped in turn.
  while (!work.empty()) {
    const size_t n = work.back();
    work.pop_back();
    for (int32_t i : g.nodes[n].inputs) {
      if (i == kAbsent || --readers[i] > 0 || uses.producer[i] < 0) continue;
      const auto p = static_cast<size_t>(uses.producer[i]);
      bool unread = !erase[p];
      for (int32_t o : g.nodes[p].outputs) unread = unread && readers[o] == 0;
      if (unread) {
        erase[p] = true;
        work.push_back(p);
      }
    }
  }
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (Node& n : before[i]) nodes.push_back(std::move(n));
    if (!erase[i]) nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
  drop_unreferenced_tensors(g);
}

bool scalar_float_constant(const Graph& g, int32_t t, float* v) {
  const Tensor& c = g.tensors[t];
  if (!c.is_constant || c.dtype != DType::kFloat32 || c.shape.numel() != 1 || c.constant.size < sizeof(float))
    return false;
  *v = *c.f32();
  return std::isfinite(*v);
}

}  // namespace vitrt::convert
