// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// eliminate_dead_code: removes ops none of whose results is read or is a graph output.
#include "planner/graph_edit.h"
#include "planner/pass.h"

namespace vitrt {
namespace {

class EliminateDeadCodePass final : public Pass {
 public:
  const char* name() const override { return "eliminate_dead_code"; }
  const char* description() const override { return "remove ops whose results nobody reads"; }

  Status run(Graph& g, const PassContext&, bool* modified) override {
    for (bool changed = true; changed;) {
      changed = false;
      const std::vector<int> consumers = consumer_counts(g);
      std::vector<bool> erase(g.nodes.size(), false);
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        bool used = false;
        for (int32_t o : g.nodes[i].outputs) used = used || consumers[o] > 0 || is_graph_output(g, o);
        if (!used) erase[i] = changed = true;
      }
      if (changed) {
        erase_nodes(g, erase);
        *modified = true;
      }
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Pass> create_eliminate_dead_code_pass() { return std::make_unique<EliminateDeadCodePass>(); }

}  // namespace vitrt
