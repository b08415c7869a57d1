// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Small queries and edits the passes share.
#include <vector>

#include "ir/graph.h"

namespace vitrt {

// How many node inputs read each tensor (graph outputs not counted).
std::vector<int> consumer_counts(const Graph& g);
bool is_graph_output(const Graph& g, int32_t tensor);
// Every node input reading `from` now reads `to`.
void replace_uses(Graph& g, int32_t from, int32_t to);
// Removes the nodes whose flag is set, keeping the order of the others.
void erase_nodes(Graph& g, const std::vector<bool>& erase);
// Rebuilds the node list in one pass: the nodes in before[i] (moved out) go ahead of node i, and the nodes
// whose erase flag is set are dropped. Both vectors are indexed by the current node order.
void splice_nodes(Graph& g, const std::vector<bool>& erase, std::vector<std::vector<Node>>* before);

}  // namespace vitrt
