// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fold_unrolled_distances (graph_normalize.h). torch.onnx.export unrolls
//   out = Σ_c (q[..., :, c, None] − l[..., None, :, c])²      (c = 0 .. d−1, accumulated in order)
// into, per channel c, a Slice of q's last axis (then Reshapes to [.., N, 1]), a Slice of l's last axis (l
// usually reshaped to [.., 1, m, d] first, the slice then reshaped to [.., 1, m]), Sub, Mul by itself, and a
// left-folded chain of Adds: ((t0 + t1) + t2) + ... The rewrite writes the same sum in the broadcast form
// (converter/arch/primitive_emit.cpp, whose Gaussian kernel the planner's fuse_attention matches):
//   ReduceSum(Mul(D, D), last axis),  D = Sub(Reshape(q, [.., N, 1, d]), Reshape(l, [.., 1, m, d])).
// The terms are the same float32 values (a Reshape moves no element); only the summation can round
// differently: the chain adds them in float32 in channel order, the IR's ReduceSum
// (backends/cpu/ref/reduce.h) accumulates in double. Once fuse_attention has made the sum part of
// LinearAttention, the kernel adds the squares in float32 in channel order again, exactly as the exported
// chain does.
#include <map>

#include "ir/shape_propagation.h"
#include "onnx/graph_normalize.h"
#include "onnx/graph_rewrite.h"

namespace vitrt::convert {
namespace {

// One channel of one operand: the tensor sliced (the operand itself, or a Reshape of it keeping the last
// axis), the channel, and the shape the column was reshaped to.
struct Column {
  int32_t source = -1;  // the operand, Reshapes that keep the last axis looked through
  int64_t channel = -1;
  Shape shape, shape2;  // of the column as the Sub reads it, at batch 1 and 2
};

struct Sum {
  size_t root = 0;           // the last Add
  std::vector<size_t> adds;  // every Add of the chain, the root included
  int32_t rows = -1, keys = -1;
  int64_t d = 0;
};

class DistanceFolder {
 public:
  explicit DistanceFolder(Graph& g) : g_(g), uses_(g) {}

  Status run(int* rewritten) {
    *rewritten = 0;
    s1_.assign(g_.tensors.size(), Shape());
    s2_.assign(g_.tensors.size(), Shape());
    VITRT_RETURN_IF_ERROR(propagate_shapes(g_, 1, s1_.data()));
    VITRT_RETURN_IF_ERROR(propagate_shapes(g_, 2, s2_.data()));
    // From the end, so a chain is met at its last Add; its inner Adds are then taken.
    std::vector<bool> erase(g_.nodes.size(), false);
    std::vector<Sum> sums;
    for (size_t i = g_.nodes.size(); i-- > 0;) {
      Sum s;
      if (erase[i] || g_.nodes[i].type != OpType::kAdd || inside_chain(i) || !match(i, &s)) continue;
      for (size_t a : s.adds) erase[a] = true;
      sums.push_back(s);
    }
    if (sums.empty()) return Status::Ok();
    // Emitted in graph order, so that a keys view shared by two sums comes before both.
    std::vector<std::vector<Node>> before(g_.nodes.size());
    std::map<int32_t, int32_t> keys_view;
    for (auto it = sums.rbegin(); it != sums.rend(); ++it) emit(*it, &keys_view, &before[it->root]);
    splice_and_prune(g_, std::move(erase), std::move(before));
    *rewritten = static_cast<int>(sums.size());
    return Status::Ok();
  }

 private:
  bool read_only_by(int32_t t, int count) const { return uses_.readers[t] == count; }

  // Whether Add `i` is the running sum of a longer chain (its one reader an Add that also reads a square of a
  // difference): the chain is tried from its end only, so each Add is walked once (no quadratic walks).
  bool inside_chain(size_t i) const {
    const int32_t out = g_.nodes[i].outputs[0];
    if (!read_only_by(out, 1) || uses_.reader[out] < 0) return false;
    const Node& n = g_.nodes[static_cast<size_t>(uses_.reader[out])];
    if (n.type != OpType::kAdd || n.inputs.size() != 2) return false;
    const Node* sq = uses_.producer_of(g_, n.inputs[n.inputs[0] == out ? 1 : 0], OpType::kMul);
    return sq && sq->inputs.size() == 2 && sq->inputs[0] == sq->inputs[1] &&
           uses_.producer_of(g_, sq->inputs[0], OpType::kSub);
  }

  // The Mul(D, D) of one term with D = Sub(row column, key column), both read by nothing else.
  bool term(int32_t t, Column* row, Column* key) const {
    const Node* sq = uses_.producer_of(g_, t, OpType::kMul);
    if (!sq || !read_only_by(t, 1) || sq->inputs.size() != 2 || sq->inputs[0] != sq->inputs[1]) return false;
    const int32_t diff = sq->inputs[0];
    const Node* sub = uses_.producer_of(g_, diff, OpType::kSub);
    return sub && read_only_by(diff, 2) && column(sub->inputs[0], row) && column(sub->inputs[1], key);
  }

  // A Slice of one channel of the last axis, then any Reshapes (they keep the element order).
  bool column(int32_t t, Column* c) const {
    c->shape = s1_[t];
    c->shape2 = s2_[t];
    const Node* r;
    while ((r = uses_.producer_of(g_, t, OpType::kReshape))) t = r->inputs[0];
    const Node* slice = uses_.producer_of(g_, t, OpType::kSlice);
    if (!slice) return false;
    const auto& a = std::get<SliceAttrs>(slice->attrs);
    const int32_t src = slice->inputs[0];
    const int rank = s1_[src].rank;
    if (rank < 2 || a.step != 1 || (a.axis != rank - 1 && a.axis != -1) || a.start < 0 ||
        a.end != a.start + 1)
      return false;
    c->channel = a.start;
    c->source = through_reshapes(src);
    return true;
  }

  // The tensor under Reshapes that keep the last axis (so channel c of either is the same values in order).
  int32_t through_reshapes(int32_t t) const {
    const int64_t d = s1_[t][s1_[t].rank - 1];
    const Node* r;
    while ((r = uses_.producer_of(g_, t, OpType::kReshape))) {
      const Shape& in = s1_[r->inputs[0]];
      if (in.rank < 2 || in[in.rank - 1] != d) break;
      t = r->inputs[0];
    }
    return t;
  }

  // Whether dims [0, n) of a and b are the same at batch 1 and 2 (so the same in every batch).
  bool same_leading(int32_t a, int32_t b, int n) const {
    for (int i = 0; i < n; ++i)
      if (s1_[a][i] != s1_[b][i] || s2_[a][i] != s2_[b][i]) return false;
    return true;
  }

  bool match(size_t root, Sum* s) const {
    // Walk the chain down: each Add reads the running sum (an inner Add, read only here) and one term.
    std::vector<std::pair<Column, Column>> terms;  // last channel first
    size_t at = root;
    while (true) {
      const Node& add = g_.nodes[at];
      if (add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) return false;
      s->adds.push_back(at);
      Column r, k;
      int acc = -1;
      for (int side = 0; side < 2 && acc < 0; ++side) {
        const int32_t other = add.inputs[1 - side];
        const Node* inner = uses_.producer_of(g_, add.inputs[side], OpType::kAdd);
        if (inner && read_only_by(add.inputs[side], 1) && term(other, &r, &k)) acc = side;
      }
      if (acc >= 0) {
        terms.push_back({r, k});
        at = static_cast<size_t>(uses_.producer[add.inputs[acc]]);
        continue;
      }
      // The innermost Add: two terms (t0 + t1, in either operand order: a + b = b + a exactly).
      Column r0, k0, r1, k1;
      if (!term(add.inputs[0], &r0, &k0) || !term(add.inputs[1], &r1, &k1)) return false;
      if (r0.channel > r1.channel) std::swap(r0, r1), std::swap(k0, k1);
      terms.push_back({r1, k1});
      terms.push_back({r0, k0});
      break;
    }
    // Every channel once, summed in order 0, 1, ..., d−1, of the same two operands.
    const int64_t d = static_cast<int64_t>(terms.size());
    const Column& row0 = terms.back().first;
    const Column& key0 = terms.back().second;
    const int32_t q = row0.source, l = key0.source;
    const Shape& qs = s1_[q];
    const Shape& ls = s1_[l];
    const int rank = qs.rank;
    if (ls.rank != rank || rank < 2 || qs[rank - 1] != d || ls[rank - 1] != d ||
        !same_leading(q, l, rank - 2))
      return false;
    // The row column broadcasts along the keys ([.., N, 1]) and the key column along the rows ([.., 1, m]).
    auto broadcast_shapes = [&](const std::vector<Shape>& s, Shape* row, Shape* key) {
      *row = s[q];
      *key = s[l];
      (*row)[rank - 1] = 1;
      (*key)[rank - 2] = 1;
      (*key)[rank - 1] = s[l][rank - 2];
    };
    Shape row_shape, key_shape, row_shape2, key_shape2;
    broadcast_shapes(s1_, &row_shape, &key_shape);
    broadcast_shapes(s2_, &row_shape2, &key_shape2);
    for (int64_t c = 0; c < d; ++c) {
      const auto& [row, key] = terms[static_cast<size_t>(d - 1 - c)];
      if (row.source != q || key.source != l || row.channel != c || key.channel != c ||
          row.shape != row_shape || key.shape != key_shape || row.shape2 != row_shape2 ||
          key.shape2 != key_shape2)
        return false;
    }
    s->root = root;
    s->rows = q;
    s->keys = l;
    s->d = d;
    return true;
  }

  void emit(const Sum& s, std::map<int32_t, int32_t>* keys_view, std::vector<Node>* out) {
    const Node& root = g_.nodes[s.root];
    const int32_t result = root.outputs[0];
    const std::string name = root.name + ".distance";
    const int rank = s1_[s.rows].rank;
    const int64_t m = s1_[s.keys][rank - 2];
    // rows [.., N, 1, d] and keys [.., 1, m, d]: 0 copies the leading dims (the batch among them).
    std::vector<int64_t> row_target(static_cast<size_t>(rank - 1), 0),
        key_target(static_cast<size_t>(rank - 2), 0);
    row_target.insert(row_target.end(), {1, s.d});
    key_target.insert(key_target.end(), {1, m, s.d});
    const int32_t rows = g_.add_activation(name + ".rows", Shape());
    out->push_back(make_node(OpType::kReshape, ReshapeAttrs{row_target}, {s.rows}, rows, name + ".rows"));
    auto k = keys_view->find(s.keys);
    if (k == keys_view->end()) {
      const int32_t keys = g_.add_activation(name + ".keys", Shape());
      out->push_back(make_node(OpType::kReshape, ReshapeAttrs{key_target}, {s.keys}, keys, name + ".keys"));
      k = keys_view->emplace(s.keys, keys).first;
    }
    const int32_t diff = g_.add_activation(name + ".diff", Shape());
    out->push_back(make_node(OpType::kSub, NoAttrs{}, {rows, k->second}, diff, name + ".diff"));
    const int32_t sq = g_.add_activation(name + ".square", Shape());
    out->push_back(make_node(OpType::kMul, NoAttrs{}, {diff, diff}, sq, name + ".square"));
    out->push_back(make_node(OpType::kReduceSum, ReduceMeanAttrs{{-1}, false}, {sq}, result, name));
  }

  Graph& g_;
  GraphUses uses_;
  std::vector<Shape> s1_, s2_;
};

}  // namespace

Status fold_unrolled_distances(Graph* g, int* rewritten) {
  return DistanceFolder(*g).run(rewritten);
}

}  // namespace vitrt::convert
