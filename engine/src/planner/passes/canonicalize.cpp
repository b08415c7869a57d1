// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// canonicalize: removes ops that do nothing (a Reshape to the same shape, a Transpose by the identity
// permutation) and folds Reshape -> Reshape chains into one Reshape.
#include "planner/graph_edit.h"
#include "planner/pass.h"

namespace vitrt {
namespace {

bool identity_perm(const std::vector<int32_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int32_t>(i)) return false;
  return true;
}

class CanonicalizePass final : public Pass {
 public:
  const char* name() const override { return "canonicalize"; }
  const char* description() const override { return "drop no-op Reshape/Transpose, merge Reshape chains"; }

  Status run(Graph& g, const PassContext&, bool* modified) override {
    std::vector<bool> erase(g.nodes.size(), false);
    const std::vector<int> consumers = consumer_counts(g);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node& n = g.nodes[i];
      if (n.type != OpType::kReshape && n.type != OpType::kTranspose) continue;
      const int32_t src = n.inputs[0], dst = n.outputs[0];
      const bool noop = n.type == OpType::kReshape ? g.tensors[src].shape == g.tensors[dst].shape
                                                   : identity_perm(std::get<TransposeAttrs>(n.attrs).perm);
      if (noop && !is_graph_output(g, dst)) {
        replace_uses(g, dst, src);
        erase[i] = true;
        *modified = true;
        continue;
      }
      // Reshape(Reshape(x)) -> Reshape(x) when the inner result has no other reader.
      if (n.type != OpType::kReshape) continue;
      for (size_t j = 0; j < i; ++j) {
        const Node& p = g.nodes[j];
        if (erase[j] || p.type != OpType::kReshape || p.outputs[0] != src || consumers[src] != 1 ||
            is_graph_output(g, src))
          continue;
        // The outer target may copy dims (0) from the intermediate shape: make them explicit first.
        auto target = std::get<ReshapeAttrs>(n.attrs).shape;
        bool ok = true;
        for (size_t d = 0; d < target.size(); ++d)
          if (target[d] == 0) {
            const int64_t v = d < static_cast<size_t>(g.tensors[src].shape.rank) ? g.tensors[src].shape[d] : -2;
            const int64_t in_v = d < static_cast<size_t>(g.tensors[p.inputs[0]].shape.rank)
                                     ? g.tensors[p.inputs[0]].shape[d]
                                     : -3;
            if (v == kDynamicDim && in_v == kDynamicDim) continue;  // still "copy the batch" from the new source
            if (v <= 0) ok = false;
            else target[d] = v;
          }
        if (!ok) continue;
        n.inputs[0] = p.inputs[0];
        std::get<ReshapeAttrs>(n.attrs).shape = target;
        erase[j] = true;
        *modified = true;
      }
    }
    if (*modified) erase_nodes(g, erase);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Pass> create_canonicalize_pass() { return std::make_unique<CanonicalizePass>(); }

}  // namespace vitrt
