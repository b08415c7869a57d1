// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "planner/graph_edit.h"

#include <algorithm>

namespace vitrt {

std::vector<int> consumer_counts(const Graph& g) {
  std::vector<int> c(g.tensors.size(), 0);
  for (const Node& n : g.nodes)
    for (int32_t i : n.inputs)
      if (i != kAbsent) c[i]++;
  return c;
}

bool is_graph_output(const Graph& g, int32_t tensor) {
  return std::find(g.outputs.begin(), g.outputs.end(), tensor) != g.outputs.end();
}

void replace_uses(Graph& g, int32_t from, int32_t to) {
  for (Node& n : g.nodes)
    for (int32_t& i : n.inputs)
      if (i == from) i = to;
}

void splice_nodes(Graph& g, const std::vector<bool>& erase, std::vector<std::vector<Node>>* before) {
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (Node& n : (*before)[i]) nodes.push_back(std::move(n));
    if (!erase[i]) nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
}

void erase_nodes(Graph& g, const std::vector<bool>& erase) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!erase[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace vitrt
