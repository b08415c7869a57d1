// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Lifetimes of activations in step indices: a tensor is live from the step that produces it to the last step
// that reads it (graph outputs: to the end). A tensor read by several ops (a reused attention map, say) simply
// stays live until its last reader: there is no special case.
#include <vector>

#include "ir/graph.h"

namespace vitrt {

struct Lifetime {
  int first = -1;  // producing step (-1: before the first step, e.g. graph inputs)
  int last = -1;   // last reading step (num_steps for graph outputs); -1 if never used
};

std::vector<Lifetime> compute_lifetimes(const Graph& graph);

}  // namespace vitrt
