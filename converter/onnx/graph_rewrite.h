// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Small tools for rewriting the imported IR graph after lowering (graph_normalize.h): who produces and who
// reads each tensor, splicing new nodes in, and dropping the producers a rewrite left unread.
#include <vector>

#include "ir/graph.h"

namespace vitrt::convert {

struct GraphUses {
  std::vector<int32_t> producer;  // tensor -> node index, -1 for inputs and constants
  std::vector<int> readers;       // tensor -> node inputs reading it; a graph output counts as one more
  std::vector<int32_t> reader;    // tensor -> a node reading it (the only one where readers is 1), or -1
  explicit GraphUses(const Graph& g);

  // The node producing `t` when it is of `type`, else nullptr.
  const Node* producer_of(const Graph& g, int32_t t, OpType type) const;
};

// A node ready for splicing: version from the op registry, one output.
Node make_node(OpType type, OpAttrs attrs, std::vector<int32_t> inputs, int32_t output, std::string name);

// Rebuilds the node list: before[i] goes ahead of node i, flagged nodes are dropped. Afterwards, every node
// that only fed dropped nodes (transitively) is dropped too, so a rewrite need not trace what it left unread,
// and the tensors no node, input or output refers to any more are removed (indices renumbered in order), so
// the model file does not carry them.
void splice_and_prune(Graph& g, std::vector<bool> erase, std::vector<std::vector<Node>> before);

// Whether tensor t is a float32 constant of one finite element; its value in *v.
bool scalar_float_constant(const Graph& g, int32_t t, float* v);

}  // namespace vitrt::convert
