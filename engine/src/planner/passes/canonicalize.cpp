// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// canonicalize: removes ops that do nothing (a Reshape to the same shape, a Transpose by the identity
// permutation) and folds Reshape -> Reshape chains into one Reshape.
#include <algorithm>

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
        // The outer target may copy dims (0) from the intermediate shape: make them explicit first. A copied
        // batch-dependent dim (kDynamicDim) may be any multiple of the batch (2B where the inner Reshape
        // folded heads into it: SOFT's exported attention), not necessarily the new source's dim at that
        // position, so it becomes the one inferred dim (-1): the element count is the chain's, so the
        // inference gives back exactly the intermediate's value. Where the target already infers a dim, the
        // chain stays. Where the inner target copied that dim from its source too (0 at the same position),
        // it is the new source's dim exactly and the 0 stays.
        auto target = std::get<ReshapeAttrs>(n.attrs).shape;
        const auto& inner = std::get<ReshapeAttrs>(p.attrs).shape;
        bool infers = std::find(target.begin(), target.end(), int64_t{-1}) != target.end();
        bool ok = true;
        for (size_t d = 0; d < target.size() && ok; ++d) {
          if (target[d] != 0) continue;
          const int64_t v = d < static_cast<size_t>(g.tensors[src].shape.rank) ? g.tensors[src].shape[d] : -2;
          if (v == kDynamicDim && d < inner.size() && inner[d] == 0) continue;
          if (v == kDynamicDim && !infers) {
            target[d] = -1;
            infers = true;
          } else if (v <= 0) {
            ok = false;
          } else {
            target[d] = v;
          }
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

std::unique_ptr<Pass> create_canonicalize_pass() {
  return std::make_unique<CanonicalizePass>();
}

}  // namespace vitrt
