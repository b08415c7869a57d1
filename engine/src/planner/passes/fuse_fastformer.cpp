// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_fastformer: Fastformer's additive attention (docs/linear_attention.md, Fastformer) as the official
// FastSelfAttention writes it and torch.onnx.export records it, after its query / key Linears:
//   α  = Softmax_last(Transpose(Linear(q, Wqa, bqa)) / s)       (the Div and the Transpose in either order,
//                                                                 or a Mul by the scale)
//   qh = Transpose{0,2,1,3}(Reshape[B,N,h,d](q))
//   pq = Reshape[B,1,C](Transpose{0,2,1,3}(MatMul(Reshape[B,h,1,N](α), qh)))
//   qk = Mul(k, broadcast of pq to [B,N,C])      (pooled_query.repeat: any chain of Reshape / Expand that
//                                                 repeats pq over the tokens, checked element by element)
//   β  = likewise from Linear(qk, Wka, bka);   pk = MatMul(Reshape[B,h,1,N](β), Transpose(Reshape(qk)))
//   u  = Reshape[B,N,C](Transpose{0,2,1,3}(Mul(pk, qh)))
// becomes FastformerAttention(q, k, Wqa, bqa, Wka, bka) with heads h and scale 1/s (one s for both scores).
// Every intermediate must be read only inside the block and be no graph output (q and k may be read
// elsewhere: the official module adds q to transform(u)), every shape exactly the block's, and the backend
// must implement the op; anything else is left alone.
#include <cmath>

#include "ops/op_registry.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

bool perm_equals(const Node& n, std::vector<int32_t> want) {
  return std::get<TransposeAttrs>(n.attrs).perm == want;
}

bool scalar_constant(const Graph& g, int32_t t, float* v) {
  const Tensor& c = g.tensors[t];
  if (!c.is_constant || c.dtype != DType::kFloat32 || c.shape.numel() != 1 || c.constant.size < sizeof(float))
    return false;
  *v = *c.f32();
  return true;
}

class Matcher {
 public:
  Matcher(const Graph& g, const GraphIndex& index, const std::vector<bool>& erase)
      : g_(g), index_(index), erase_(erase) {}

  std::vector<int32_t> nodes;  // every node the fused op replaces
  int64_t b = 0, n = 0, c = 0, h = 0, d = 0;
  float scale = 0.0f;
  int32_t q = kAbsent, k = kAbsent, wqa = kAbsent, bqa = kAbsent, wka = kAbsent, bka = kAbsent;

  // The block ending at node `root` (the final Reshape).
  bool match(size_t root) {
    const Node& out = g_.nodes[root];
    if (out.type != OpType::kReshape || out.outputs.size() != 1) return false;
    const Shape& us = shape(out.outputs[0]);
    if (us.rank != 3) return false;
    b = us[0];
    n = us[1];
    c = us[2];
    nodes.push_back(static_cast<int32_t>(root));
    int32_t t = out.inputs[0], p;
    // [B,N,h,d] <- Transpose <- Mul(pk, qh) [B,h,N,d]
    if (shape(t).rank != 4 || !single(t, OpType::kTranspose, &p) || !perm_equals(g_.nodes[p], {0, 2, 1, 3}))
      return false;
    h = shape(t)[2];
    d = shape(t)[3];
    if (h < 1 || d < 1 || h * d != c || shape(t) != Shape{b, n, h, d}) return false;
    t = g_.nodes[p].inputs[0];
    if (!single(t, OpType::kMul, &p) || shape(t) != Shape{b, h, n, d}) return false;
    const Node& mul = g_.nodes[p];
    for (int side = 0; side < 2; ++side) {
      const size_t mark = nodes.size();
      if (tail(mul.inputs[side], mul.inputs[1 - side])) return true;
      nodes.resize(mark);
    }
    return false;
  }

 private:
  const Shape& shape(int32_t t) const { return g_.tensors[t].shape; }

  // The producer of `t` has type `type`, one output, and `t` has `readers` readers, no graph output.
  bool single(int32_t t, OpType type, int32_t* node, int readers = 1) {
    if (t == kAbsent || index_.consumers[t] != readers || is_graph_output(g_, t)) return false;
    const int32_t p = index_.producer[t];
    if (p < 0 || erase_[p] || g_.nodes[p].type != type || g_.nodes[p].outputs.size() != 1) return false;
    *node = p;
    nodes.push_back(p);
    return true;
  }

  // pk = MatMul(β, kh) at `pk_t`, qh at `qh_t` (read by the final Mul and the pooled query's MatMul).
  bool tail(int32_t pk_t, int32_t qh_t) {
    int32_t qh_node;
    if (shape(pk_t) != Shape{b, h, 1, d} || shape(qh_t) != Shape{b, h, n, d}) return false;
    if (!heads_of(qh_t, 2, &q, &qh_node)) return false;
    int32_t p;
    if (!single(pk_t, OpType::kMatMul, &p)) return false;
    const Node& pk = g_.nodes[p];
    // kh = heads of qk, qk read by key_att and kh's Reshape.
    int32_t qk, kh_node;
    if (!heads_of(pk.inputs[1], 1, &qk, &kh_node)) return false;
    float key_scale;
    if (!weights_of(pk.inputs[0], qk, &wka, &bka, &key_scale)) return false;
    // qk = Mul(k, repeat(pq)) with 2 readers (key_att, kh's Reshape).
    if (!single(qk, OpType::kMul, &p, 2) || shape(qk) != Shape{b, n, c}) return false;
    const Node& qk_mul = g_.nodes[p];
    for (int side = 0; side < 2; ++side) {
      const size_t mark = nodes.size();
      k = qk_mul.inputs[side];
      scale = key_scale;
      if (shape(k) == Shape{b, n, c} && pooled_query(qk_mul.inputs[1 - side], qh_t)) return true;
      nodes.resize(mark);
    }
    return false;
  }

  // `t` = Transpose{0,2,1,3}(Reshape[B,N,h,d](x)) with x [B,N,C]; the Transpose's output has `readers`
  // readers.
  bool heads_of(int32_t t, int readers, int32_t* x, int32_t* node) {
    int32_t p;
    if (!single(t, OpType::kTranspose, &p, readers) || !perm_equals(g_.nodes[p], {0, 2, 1, 3})) return false;
    *node = p;
    const int32_t r = g_.nodes[p].inputs[0];
    if (shape(r) != Shape{b, n, h, d} || !single(r, OpType::kReshape, &p)) return false;
    *x = g_.nodes[p].inputs[0];
    return shape(*x) == Shape{b, n, c};
  }

  // `w4` = Reshape[B,h,1,N](Softmax over tokens of the scores of x): Linear(x, W [h,C], bias [h]) then a
  // Transpose{0,2,1} and a Div by (or Mul by) a scalar constant, in either order. The scale is 1/divisor.
  bool weights_of(int32_t w4, int32_t x, int32_t* w, int32_t* bias, float* scale_out) {
    int32_t p;
    if (shape(w4) != Shape{b, h, 1, n} || !single(w4, OpType::kReshape, &p)) return false;
    int32_t t = g_.nodes[p].inputs[0];
    if (shape(t) != Shape{b, h, n} || !single(t, OpType::kSoftmax, &p)) return false;
    int axis;
    if (!normalize_axis(std::get<SoftmaxAttrs>(g_.nodes[p].attrs).axis, 3, &axis) || axis != 2) return false;
    t = g_.nodes[p].inputs[0];
    bool transposed = false, scaled = false;
    while (!(transposed && scaled)) {
      const int32_t prod = index_.producer[t];
      if (prod < 0) return false;
      const OpType type = g_.nodes[prod].type;
      if (type == OpType::kTranspose && !transposed) {
        if (shape(t) != Shape{b, h, n} || !single(t, OpType::kTranspose, &p) ||
            !perm_equals(g_.nodes[p], {0, 2, 1}))
          return false;
        transposed = true;
      } else if ((type == OpType::kDiv || type == OpType::kMul) && !scaled) {
        if (shape(t) != (transposed ? Shape{b, n, h} : Shape{b, h, n}) || !single(t, type, &p)) return false;
        // The scores are operand 0 (a Mul may hold its scale first).
        const Node& op = g_.nodes[p];
        const int data = type == OpType::kMul && index_.producer[op.inputs[0]] < 0 ? 1 : 0;
        float v;
        if (!scalar_constant(g_, op.inputs[1 - data], &v) || !std::isfinite(v) || !(v > 0)) return false;
        *scale_out = type == OpType::kDiv ? 1.0f / v : v;
        if (!std::isfinite(*scale_out) || !(*scale_out > 0)) return false;
        scaled = true;
        t = op.inputs[data];
        continue;
      } else {
        return false;
      }
      t = g_.nodes[p].inputs[0];
    }
    if (shape(t) != Shape{b, n, h} || !single(t, OpType::kLinear, &p)) return false;
    const Node& lin = g_.nodes[p];
    if (std::get<LinearAttrs>(lin.attrs).activation != Activation::kNone || lin.inputs.size() < 3 ||
        lin.inputs[2] == kAbsent || (lin.inputs.size() > 3 && lin.inputs[3] != kAbsent) || lin.inputs[0] != x)
      return false;
    *w = lin.inputs[1];
    *bias = lin.inputs[2];
    return shape(*w) == Shape{h, c} && shape(*bias) == Shape{h};
  }

  // `rep` repeats pq = Transpose{0,2,1,3}(MatMul(α, qh)) [B,1,h,d] (the same bytes as [B,1,C]) over the
  // tokens: a chain of Reshape / Expand nodes whose result is checked element by element to be pq's of its
  // channel, repeated over the tokens or left [B,1,C] for the Mul to broadcast.
  bool pooled_query(int32_t rep, int32_t qh_t) {
    std::vector<int32_t> chain;  // producers first
    int32_t t = rep, p;
    for (;;) {
      const int32_t prod = index_.producer[t];
      if (prod < 0 || chain.size() > 6) return false;
      const OpType type = g_.nodes[prod].type;
      if (type == OpType::kTranspose) break;
      if ((type != OpType::kReshape && type != OpType::kExpand) || !single(t, type, &p)) return false;
      chain.insert(chain.begin(), p);
      t = g_.nodes[p].inputs[0];
    }
    if (chain.empty() || !repeats_over_tokens(chain)) return false;
    if (shape(t) != Shape{b, 1, h, d} || !single(t, OpType::kTranspose, &p) ||
        !perm_equals(g_.nodes[p], {0, 2, 1, 3}))
      return false;
    t = g_.nodes[p].inputs[0];
    if (shape(t) != Shape{b, h, 1, d} || !single(t, OpType::kMatMul, &p) || g_.nodes[p].inputs[1] != qh_t)
      return false;
    float query_scale;
    if (!weights_of(g_.nodes[p].inputs[0], q, &wqa, &bqa, &query_scale)) return false;
    // One scale serves both scores; the official module divides both by sqrt(d).
    return query_scale == scale;
  }

  // Runs the chain's Reshapes and Expands on element ids of pq, [B,1,h,d] (a dynamic batch as 1), and checks
  // that it gives [B,N,C] with element (b, t, ch) = pq's (b, ch), or [B,1,C] (the Mul broadcasts it).
  bool repeats_over_tokens(const std::vector<int32_t>& chain) const {
    const int64_t bb = b == kDynamicDim ? 1 : b;
    if (bb < 1 || n < 1 || bb * n * c > (int64_t{1} << 24)) return false;
    std::vector<int64_t> ids(static_cast<size_t>(bb * c));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
    Shape cur{bb, 1, h, d};
    for (int32_t node : chain) {
      const Node& nd = g_.nodes[node];
      Shape next = shape(nd.outputs[0]);
      for (int i = 0; i < next.rank; ++i)
        if (next[i] == kDynamicDim) next[i] = 1;
      if (nd.type == OpType::kReshape) {
        if (next.numel() != cur.numel()) return false;
        cur = next;
        continue;
      }
      // Expand: numpy broadcasting of cur (right-aligned) to next.
      if (next.rank < cur.rank) return false;
      const int off = next.rank - cur.rank;
      for (int i = 0; i < cur.rank; ++i)
        if (cur[i] != 1 && cur[i] != next[off + i]) return false;
      if (next.numel() > (int64_t{1} << 24)) return false;
      std::vector<int64_t> out(static_cast<size_t>(next.numel()));
      std::vector<int64_t> idx(static_cast<size_t>(next.rank), 0);
      for (size_t e = 0; e < out.size(); ++e) {
        int64_t src = 0;
        for (int i = 0; i < cur.rank; ++i)
          src = src * cur[i] + (cur[i] == 1 ? 0 : idx[static_cast<size_t>(off + i)]);
        out[e] = ids[static_cast<size_t>(src)];
        for (int i = next.rank - 1; i >= 0; --i)
          if (++idx[static_cast<size_t>(i)] < next[i])
            break;
          else
            idx[static_cast<size_t>(i)] = 0;
      }
      ids.swap(out);
      cur = next;
    }
    if (cur == Shape{bb, 1, c}) return true;  // ids are still pq's own order
    if (cur != Shape{bb, n, c}) return false;
    for (int64_t bi = 0; bi < bb; ++bi)
      for (int64_t t = 0; t < n; ++t)
        for (int64_t ch = 0; ch < c; ++ch)
          if (ids[static_cast<size_t>((bi * n + t) * c + ch)] != bi * c + ch) return false;
    return true;
  }

 private:
  const Graph& g_;
  const GraphIndex& index_;
  const std::vector<bool>& erase_;
};

class FuseFastformerPass final : public Pass {
 public:
  const char* name() const override { return "fuse_fastformer"; }
  const char* description() const override {
    return "Fastformer's additive attention (query_att / key_att scores, softmax pooling, query = value) -> "
           "one "
           "FastformerAttention op";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const GraphIndex index(g);
    std::vector<bool> erase(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].type != OpType::kReshape) continue;
      Matcher m(g, index, erase);
      if (!m.match(i)) continue;
      Node fused;
      fused.type = OpType::kFastformerAttention;
      fused.name = g.nodes[i].name;
      FastformerAttentionAttrs a;
      a.heads = static_cast<int32_t>(m.h);
      a.scale = m.scale;
      fused.attrs = a;
      fused.inputs = {m.q, m.k, m.wqa, m.bqa, m.wka, m.bka};
      fused.outputs = g.nodes[i].outputs;
      // The fused op must infer the very shape the block produced.
      Shape in[6], out[1];
      const Shape* ptrs[6];
      for (int j = 0; j < 6; ++j) {
        in[j] = g.tensors[fused.inputs[static_cast<size_t>(j)]].shape;
        for (int r = 0; r < in[j].rank; ++r)
          if (in[j][r] == kDynamicDim) in[j][r] = 1;
        ptrs[j] = &in[j];
      }
      if (!infer_node_shapes(fused, ptrs, 6, out).ok()) continue;
      Shape want = g.tensors[fused.outputs[0]].shape;
      for (int r = 0; r < want.rank; ++r)
        if (want[r] == kDynamicDim) want[r] = 1;
      if (out[0] != want) continue;
      if (ctx.backend && !ctx.backend->supports(fused)) continue;
      for (int32_t nd : m.nodes)
        if (nd != static_cast<int32_t>(i)) erase[nd] = true;
      g.nodes[i] = std::move(fused);
      *modified = true;
    }
    if (*modified) erase_nodes(g, erase);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Pass> create_fuse_fastformer_pass() {
  return std::make_unique<FuseFastformerPass>();
}

}  // namespace vitrt
