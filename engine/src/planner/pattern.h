// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Graph patterns written as data (ORT's selector/action split; TVM's dataflow patterns). A pattern is a list
// of ops, each naming the value it produces and the values it reads; a name that no op of the pattern
// produces is a capture, bound to whatever tensor sits there (the same capture twice must be the same
// tensor). Each op may carry a check on its node's attributes; predicates over the whole match (e.g.
// consistent head counts) belong to the rewrite that uses the pattern.
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace vitrt {

struct PatternOp {
  std::string value;  // what this op produces (its only output)
  OpType type;
  std::vector<std::string> inputs;  // values of other ops, or captures; "" for an absent optional input
  std::function<bool(const Node&)> check;  // attribute test; empty accepts any

  PatternOp(std::string v, OpType t, std::vector<std::string> in, std::function<bool(const Node&)> c = {})
      : value(std::move(v)), type(t), inputs(std::move(in)), check(std::move(c)) {}
};

struct Pattern {
  std::string name;
  std::vector<PatternOp> ops;         // the root, whose value is the fused op's first output, comes last
  std::vector<std::string> exported;  // values that may also be read outside the match
};

struct Match {
  std::map<std::string, int32_t> tensors;  // every op value and capture -> tensor
  std::map<std::string, size_t> nodes;     // every op value -> node index
  size_t root = 0;

  int32_t tensor(const std::string& name) const { return tensors.at(name); }
  const Node& node(const Graph& g, const std::string& value) const { return g.nodes[nodes.at(value)]; }
};

// The graph facts a match needs, computed once per pass run.
struct GraphIndex {
  std::vector<int32_t> producer;  // tensor -> node index, -1 for inputs and constants
  std::vector<int> consumers;     // tensor -> number of node inputs reading it
  explicit GraphIndex(const Graph& g);
};

// Tries `p` with its root at node `root`. On success every op and capture is bound, every non-exported value
// is read only inside the match (and is no graph output), and every outside reader of an exported value comes
// after the root. Add and Mul also match with their operands swapped.
bool match_pattern(const Graph& g, const GraphIndex& index, const Pattern& p, size_t root, Match* m);

struct PassContext;

// The replace loop of the single-node fusion passes. For each node that `is_root` accepts, `fuse` matches its
// patterns with the root there and, on success, builds the fused node in *fused (inputs, outputs, attrs). The
// root is replaced (named after it, at the lowest op version its attributes need) unless a node of the match
// was taken by an earlier fusion or the session's backend does not support the fused node; the match's other
// nodes are erased. `complete`, when given, runs once the match overlaps no earlier fusion and before the
// backend is asked: it may add tensors the fused node reads (a constant seen under another shape) and nodes
// in *before that compute some of them from tensors outside the match (a merge of heads the fused op reads as
// tokens; they run just ahead of the fused node and the backend must support each), all removed again when
// the fusion is rejected after all, and returns false to reject it. Returns whether any node was fused.
bool fuse_at_roots(Graph& g, const PassContext& ctx, const std::function<bool(const Node&)>& is_root,
                   const std::function<bool(const GraphIndex&, size_t root, Match*, Node* fused)>& fuse,
                   const std::function<bool(Graph&, Node* fused, std::vector<Node>* before)>& complete = {});

// The first of `patterns` that matches with its root at node `root` (match_pattern on each in turn).
template <size_t N>
bool match_first(const Graph& g, const GraphIndex& index, const Pattern (&patterns)[N], size_t root,
                 Match* m) {
  for (const Pattern& p : patterns)
    if (match_pattern(g, index, p, root, m)) return true;
  return false;
}

// Attribute checks for pattern tables.
std::function<bool(const Node&)> perm_is(std::vector<int32_t> perm);
std::function<bool(const Node&)> slice_is(int32_t axis, int64_t start, int64_t end);  // step 1
// Reshape targets: `shape` with kAny entries accepting any value.
constexpr int64_t kAny = std::numeric_limits<int64_t>::min();
std::function<bool(const Node&)> reshape_is(std::vector<int64_t> shape);

}  // namespace vitrt
