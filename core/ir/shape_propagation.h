// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Concrete shapes of every tensor for one batch size, by running each op's shape inference in order.
#include "ir/graph.h"

namespace vitrt {

// `shapes` must hold graph.tensors.size() entries; it is filled in place and nothing is allocated on success,
// so this also runs inside Session::run when the batch changes. Graph inputs take their declared shape with
// the dynamic (batch) dimension replaced by `batch`.
Status propagate_shapes(const Graph& graph, int64_t batch, Shape* shapes);

// Propagates at batch 1 and 2 and writes into graph.tensors[i].shape the activation shapes with
// batch-dependent dimensions marked kDynamicDim. Fails if a declared activation shape (rank > 0) disagrees.
Status resolve_activation_shapes(Graph* graph);

}  // namespace vitrt
