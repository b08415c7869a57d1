// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "memory/liveness.h"

namespace vitrt {

std::vector<Lifetime> compute_lifetimes(const Graph& graph) {
  std::vector<Lifetime> life(graph.tensors.size());
  const int num_steps = static_cast<int>(graph.nodes.size());
  for (int s = 0; s < num_steps; ++s) {
    const Node& n = graph.nodes[s];
    for (int32_t o : n.outputs) {
      life[o].first = s;
      if (life[o].last < s) life[o].last = s;  // written even if never read
    }
    for (int32_t i : n.inputs)
      if (i != kAbsent) life[i].last = s;
  }
  for (int32_t o : graph.outputs) life[o].last = num_steps;
  for (int32_t i : graph.inputs) life[i].first = -1;
  return life;
}

}  // namespace vitrt
