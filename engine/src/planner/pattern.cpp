// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "planner/pattern.h"

#include <algorithm>
#include <cstddef>
#include <set>

#include "ops/op_registry.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"

namespace vitrt {
namespace {

class Matcher {
 public:
  Matcher(const Graph& g, const GraphIndex& index, const Pattern& p) : g_(g), index_(index), p_(p) {
    for (size_t i = 0; i < p.ops.size(); ++i) op_of_[p.ops[i].value] = i;
  }

  bool bind_op(size_t op, size_t node, Match* m) const {
    const PatternOp& po = p_.ops[op];
    auto bound = m->nodes.find(po.value);
    if (bound != m->nodes.end()) return bound->second == node;
    const Node& n = g_.nodes[node];
    if (n.type != po.type || n.outputs.size() != 1 || n.inputs.size() > po.inputs.size()) return false;
    if (po.check && !po.check(n)) return false;
    m->nodes[po.value] = node;
    m->tensors[po.value] = n.outputs[0];
    std::vector<int32_t> inputs = n.inputs;  // trailing optional inputs may be left out
    inputs.resize(po.inputs.size(), kAbsent);
    if (bind_inputs(po, n, inputs, m)) return true;
    if ((n.type == OpType::kAdd || n.type == OpType::kMul) && n.inputs.size() == 2) {
      const std::vector<int32_t> swapped = {n.inputs[1], n.inputs[0]};
      return bind_inputs(po, n, swapped, m);
    }
    return false;
  }

 private:
  // Binds the inputs in order; on failure restores *m as it was.
  bool bind_inputs(const PatternOp& po, const Node&, const std::vector<int32_t>& inputs, Match* m) const {
    const Match saved = *m;
    for (size_t j = 0; j < inputs.size(); ++j) {
      const std::string& name = po.inputs[j];
      const int32_t t = inputs[j];
      if (name.empty()) {
        if (t != kAbsent) return restore(saved, m);
        continue;
      }
      if (t == kAbsent) return restore(saved, m);
      auto op = op_of_.find(name);
      if (op == op_of_.end()) {  // a capture
        auto it = m->tensors.find(name);
        if (it != m->tensors.end() && it->second != t) return restore(saved, m);
        m->tensors[name] = t;
        continue;
      }
      const int32_t prod = index_.producer[t];
      if (prod < 0 || !bind_op(op->second, static_cast<size_t>(prod), m)) return restore(saved, m);
    }
    return true;
  }
  static bool restore(const Match& saved, Match* m) {
    *m = saved;
    return false;
  }

  const Graph& g_;
  const GraphIndex& index_;
  const Pattern& p_;
  std::map<std::string, size_t> op_of_;
};

bool is_output(const Graph& g, int32_t t) {
  return std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
}

}  // namespace

GraphIndex::GraphIndex(const Graph& g) : producer(g.tensors.size(), -1), consumers(g.tensors.size(), 0) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int32_t o : g.nodes[i].outputs) producer[o] = static_cast<int32_t>(i);
    for (int32_t t : g.nodes[i].inputs)
      if (t != kAbsent) consumers[t]++;
  }
}

bool match_pattern(const Graph& g, const GraphIndex& index, const Pattern& p, size_t root, Match* m) {
  if (p.ops.empty()) return false;
  *m = Match{};
  m->root = root;
  Matcher matcher(g, index, p);
  if (!matcher.bind_op(p.ops.size() - 1, root, m) || m->nodes.size() != p.ops.size()) return false;
  // A capture must come from outside the match: one bound to a value the match itself computes (q = k = x·s
  // with x·s inside the pattern) would leave the fused op reading a value the rewrite removes.
  std::set<int32_t> matched_nodes;
  for (const auto& kv : m->nodes) matched_nodes.insert(static_cast<int32_t>(kv.second));
  for (const auto& kv : m->tensors)
    if (m->nodes.count(kv.first) == 0 && kv.second >= 0 && matched_nodes.count(index.producer[kv.second]))
      return false;
  // Readers of each matched value inside the match.
  std::map<int32_t, int> inside;
  for (const auto& kv : m->nodes)
    for (int32_t t : g.nodes[kv.second].inputs)
      if (t != kAbsent) inside[t]++;
  const std::string& root_value = p.ops.back().value;
  for (const auto& kv : m->nodes) {
    if (kv.first == root_value) continue;
    const int32_t t = m->tensors.at(kv.first);
    const bool exported = std::find(p.exported.begin(), p.exported.end(), kv.first) != p.exported.end();
    if (!exported) {
      if (index.consumers[t] != inside[t] || is_output(g, t)) return false;
      continue;
    }
    // An exported value becomes an output of the fused op, which runs at the root's place.
    for (size_t i = 0; i < root; ++i) {
      bool matched = false;
      for (const auto& n : m->nodes) matched = matched || n.second == i;
      if (matched) continue;
      for (int32_t in : g.nodes[i].inputs)
        if (in == t) return false;
    }
  }
  return true;
}

bool fuse_at_roots(Graph& g, const PassContext& ctx, const std::function<bool(const Node&)>& is_root,
                   const std::function<bool(const GraphIndex&, size_t, Match*, Node*)>& fuse,
                   const std::function<bool(Graph&, Node*, std::vector<Node>*)>& complete) {
  GraphIndex index(g);
  std::vector<bool> erase(g.nodes.size(), false);
  std::vector<std::vector<Node>> before(g.nodes.size());
  bool modified = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (erase[i] || !is_root(g.nodes[i])) continue;
    Node fused;
    Match m;
    if (!fuse(index, i, &m, &fused)) continue;
    bool overlaps = false;
    for (const auto& kv : m.nodes) overlaps = overlaps || erase[kv.second];
    if (overlaps) continue;
    fused.name = g.nodes[i].name;
    fused.version = lowest_op_version(fused.type, fused.attrs);
    const size_t tensors = g.tensors.size();
    std::vector<Node> ahead;
    bool ok = !complete || complete(g, &fused, &ahead);
    for (Node& n : ahead) n.version = lowest_op_version(n.type, n.attrs);
    if (ok && ctx.backend) {
      ok = ctx.backend->supports(fused);
      for (const Node& n : ahead) ok = ok && ctx.backend->supports(n);
    }
    if (!ok) {
      g.tensors.erase(g.tensors.begin() + static_cast<std::ptrdiff_t>(tensors), g.tensors.end());
      continue;
    }
    // The added tensors have no producer in the node list yet and one reader (the fused node).
    index.producer.resize(g.tensors.size(), -1);
    index.consumers.resize(g.tensors.size(), 1);
    for (const auto& kv : m.nodes) erase[kv.second] = kv.second != i;
    for (int32_t o : fused.outputs) index.producer[o] = static_cast<int32_t>(i);
    g.nodes[i] = std::move(fused);
    before[i] = std::move(ahead);
    modified = true;
  }
  if (modified) splice_nodes(g, erase, &before);
  return modified;
}

std::function<bool(const Node&)> perm_is(std::vector<int32_t> perm) {
  return [perm](const Node& n) { return std::get<TransposeAttrs>(n.attrs).perm == perm; };
}

std::function<bool(const Node&)> slice_is(int32_t axis, int64_t start, int64_t end) {
  return [=](const Node& n) {
    const auto& a = std::get<SliceAttrs>(n.attrs);
    return a.axis == axis && a.start == start && a.end == end && a.step == 1;
  };
}

std::function<bool(const Node&)> reshape_is(std::vector<int64_t> shape) {
  return [shape](const Node& n) {
    const auto& s = std::get<ReshapeAttrs>(n.attrs).shape;
    if (s.size() != shape.size()) return false;
    for (size_t i = 0; i < s.size(); ++i)
      if (shape[i] != kAny && shape[i] != s[i]) return false;
    return true;
  };
}

}  // namespace vitrt
