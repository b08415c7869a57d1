// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_efficient_attention: the heads of Efficient Attention (Shen et al., cmsflash/efficient-attention;
// docs/linear_attention.md, KernelizedAttention SoftmaxPair) as torch.onnx.export writes the official module,
// on keys K, queries Q [B,dk,N] and values V [B,dv,N] (1×1 conv outputs viewed as [B,·,H·W]):
//   per head i:  key   = Softmax(axis 2)(Slice(K, axis 1, i·dkh, (i+1)·dkh))
//                query = Softmax(axis 1)(Slice(Q, axis 1, i·dkh, (i+1)·dkh))
//                value = Slice(V, axis 1, i·dvh, (i+1)·dvh)
//                out_i = Reshape([B,dvh,H,W])(MatMul(Transpose(MatMul(key, Transpose(value))), query))
//   root:        Concat(axis 1)(out_0, ..., out_{h-1})                                   [B,dv,H,W]
// becomes the tokens Kᵀ, Qᵀ, Vᵀ (Transpose [0,2,1]) -> KernelizedAttention(SoftmaxPair, h) -> Transpose back
// -> Reshape to [B,dv,H,W]. Exactness: the slices cover the channels in head order with one width per operand
// (dkh for K and Q, dvh for V), step 1; the softmax axes and transposes are exactly these; every
// intermediate has its one reader in the block and is no graph output; every shape is the block's. Anything
// else is left alone, and so is a block the session's backend does not implement.
#include "ops/op_registry.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"

namespace vitrt {
namespace {

struct Head {
  int32_t k = kAbsent, q = kAbsent, v = kAbsent;  // the sliced tensors
  int64_t k_start = 0, k_end = 0, q_start = 0, q_end = 0, v_start = 0, v_end = 0;
};

class FuseEfficientAttentionPass final : public Pass {
 public:
  const char* name() const override { return "fuse_efficient_attention"; }
  const char* description() const override {
    return "Efficient Attention's per-head Slice -> Softmax (keys over positions, queries over channels) -> "
           "MatMul -> Transpose -> MatMul -> Reshape -> Concat -> one KernelizedAttention op";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const std::vector<int> consumers = consumer_counts(g);
    std::vector<int32_t> producer(g.tensors.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int32_t t : g.nodes[i].outputs)
        if (t != kAbsent) producer[t] = static_cast<int32_t>(i);
    std::vector<bool> erase(g.nodes.size(), false);
    std::vector<std::vector<Node>> before(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& cat = g.nodes[i];
      if (cat.type != OpType::kConcat || cat.outputs.size() != 1 || cat.inputs.empty()) continue;
      std::vector<int32_t> block;
      int32_t kq[3];
      if (!match(g, consumers, producer, erase, cat, &block, kq)) continue;
      const int32_t k = kq[0], q = kq[1], v = kq[2];
      const Shape ks = g.tensors[k].shape, vs = g.tensors[v].shape, out = g.tensors[cat.outputs[0]].shape;
      const int64_t heads = static_cast<int64_t>(cat.inputs.size());
      KernelizedAttentionAttrs a;
      a.kind = KernelizedKind::kSoftmaxPair;
      a.num_heads = static_cast<int32_t>(heads);
      a.eps = 0.0f;
      a.scale = 1.0f;
      Node fused;
      fused.type = OpType::kKernelizedAttention;
      fused.attrs = a;
      fused.name = cat.name + ".kernelized";
      fused.outputs = {cat.outputs[0]};  // for the checks below; its own tokens tensor once they pass
      if (ctx.backend && !ctx.backend->supports(fused)) continue;
      // The fused op must infer the tokens the block's output holds: [B, N, dv] with the batch at 1.
      const Shape qk_tokens{1, ks[2], ks[1]}, v_tokens{1, vs[2], vs[1]};
      const Shape* src[3] = {&qk_tokens, &qk_tokens, &v_tokens};
      Shape inferred[1];
      if (!infer_node_shapes(fused, src, 3, inferred).ok() || inferred[0] != Shape{1, vs[2], vs[1]} ||
          vs[1] * vs[2] != out[1] * out[2] * out[3])
        continue;
      std::vector<Node> nodes;
      auto to_tokens = [&](int32_t t, const Shape& s, const char* what) {
        Node tr;
        tr.type = OpType::kTranspose;
        tr.attrs = TransposeAttrs{{0, 2, 1}};
        tr.inputs = {t};
        tr.name = fused.name + "." + what;
        tr.outputs = {g.add_activation(tr.name, Shape{kDynamicDim, s[2], s[1]})};
        nodes.push_back(std::move(tr));
        return nodes.back().outputs[0];
      };
      fused.inputs = {to_tokens(q, ks, "q"), to_tokens(k, ks, "k"), to_tokens(v, vs, "v")};
      fused.outputs = {g.add_activation(fused.name, Shape{kDynamicDim, vs[2], vs[1]})};
      const int32_t tokens = fused.outputs[0];
      nodes.push_back(std::move(fused));
      Node back;
      back.type = OpType::kTranspose;
      back.attrs = TransposeAttrs{{0, 2, 1}};
      back.inputs = {tokens};
      back.name = cat.name + ".channels";
      back.outputs = {g.add_activation(back.name, Shape{kDynamicDim, vs[1], vs[2]})};
      const int32_t channels = back.outputs[0];
      nodes.push_back(std::move(back));
      Node grid;
      grid.type = OpType::kReshape;
      grid.attrs = ReshapeAttrs{{0, out[1], out[2], out[3]}};
      grid.inputs = {channels};
      grid.outputs = cat.outputs;
      grid.name = cat.name;
      nodes.push_back(std::move(grid));
      for (int32_t n : block) erase[n] = true;
      erase[i] = true;
      // The new nodes take the Concat's place: after the sources' producers, before every reader of the
      // output.
      for (Node& n : nodes) before[i].push_back(std::move(n));
      *modified = true;
    }
    if (*modified) splice_nodes(g, erase, &before);
    return Status::Ok();
  }

 private:
  // Matches the heads behind `cat`; on success `block` holds every node but the Concat and kqv = {K, Q, V}.
  static bool match(const Graph& g, const std::vector<int>& consumers, const std::vector<int32_t>& producer,
                    const std::vector<bool>& erase, const Node& cat, std::vector<int32_t>* block,
                    int32_t kqv[3]) {
    const Shape& out = g.tensors[cat.outputs[0]].shape;
    int cat_axis;
    if (out.rank != 4 || !normalize_axis(std::get<ConcatAttrs>(cat.attrs).axis, 4, &cat_axis) ||
        cat_axis != 1)
      return false;
    const int64_t heads = static_cast<int64_t>(cat.inputs.size());
    if (out[1] < heads || out[1] % heads != 0) return false;
    const int64_t dvh = out[1] / heads, n = out[2] * out[3];
    // The single-reader producer of `t` (no graph output), of type `type`.
    auto take = [&](int32_t t, OpType type, int32_t* node) {
      if (t == kAbsent || consumers[t] != 1 || is_graph_output(g, t)) return false;
      const int32_t p = producer[t];
      if (p < 0 || erase[p] || g.nodes[p].type != type || g.nodes[p].outputs.size() != 1) return false;
      *node = p;
      block->push_back(p);
      return true;
    };
    auto shape = [&](int32_t t) -> const Shape& { return g.tensors[t].shape; };
    // [B,rows,cols] with the block's own batch: a K, Q or V of batch 1 broadcast by the MatMuls against the
    // others' B would not fit the fused op, which takes one batch for all three.
    auto is_bmn = [&](int32_t t, int64_t rows, int64_t cols) {
      const Shape& s = shape(t);
      return s.rank == 3 && s[0] == out[0] && s[1] == rows && s[2] == cols;
    };
    auto transposed = [&](const Node& nd) {
      return std::get<TransposeAttrs>(nd.attrs).perm == std::vector<int32_t>{0, 2, 1};
    };
    auto softmax_axis = [&](const Node& nd, int axis) {
      int k;
      return normalize_axis(std::get<SoftmaxAttrs>(nd.attrs).axis, 3, &k) && k == axis;
    };
    // Slice(src, axis 1, start, end) with step 1 on a rank-3 source; returns the source.
    auto slice = [&](int32_t t, int64_t start, int64_t width, int32_t* src) {
      int32_t s;
      if (!take(t, OpType::kSlice, &s)) return false;
      const auto& a = std::get<SliceAttrs>(g.nodes[s].attrs);
      *src = g.nodes[s].inputs[0];
      int ax;
      return shape(*src).rank == 3 && normalize_axis(a.axis, 3, &ax) && ax == 1 && a.step == 1 &&
             a.start == start && a.end == start + width;
    };
    int64_t dkh = -1;
    for (int64_t h = 0; h < heads; ++h) {
      int32_t nd;
      int32_t t = cat.inputs[static_cast<size_t>(h)];
      const Shape& hs = shape(t);
      if (hs.rank != 4 || hs[1] != dvh || hs[2] != out[2] || hs[3] != out[3] ||
          !take(t, OpType::kReshape, &nd))
        return false;
      t = g.nodes[nd].inputs[0];  // contextᵀ @ query [B,dvh,N]
      if (!is_bmn(t, dvh, n) || !take(t, OpType::kMatMul, &nd)) return false;
      const int32_t ctx_t = g.nodes[nd].inputs[0], query = g.nodes[nd].inputs[1];
      if (!take(ctx_t, OpType::kTranspose, &nd) || !transposed(g.nodes[nd])) return false;
      const int32_t context = g.nodes[nd].inputs[0];  // [B,dkh,dvh]
      if (shape(context).rank != 3 || shape(context)[2] != dvh) return false;
      if (dkh < 0) dkh = shape(context)[1];
      if (dkh < 1 || !is_bmn(context, dkh, dvh) || !is_bmn(ctx_t, dvh, dkh) || !is_bmn(query, dkh, n) ||
          !take(context, OpType::kMatMul, &nd))
        return false;
      const int32_t key = g.nodes[nd].inputs[0], value_t = g.nodes[nd].inputs[1];
      if (!is_bmn(key, dkh, n) || !is_bmn(value_t, n, dvh)) return false;
      int32_t src[3];
      if (!take(key, OpType::kSoftmax, &nd) || !softmax_axis(g.nodes[nd], 2) ||
          !slice(g.nodes[nd].inputs[0], h * dkh, dkh, &src[0]))
        return false;
      if (!take(query, OpType::kSoftmax, &nd) || !softmax_axis(g.nodes[nd], 1) ||
          !slice(g.nodes[nd].inputs[0], h * dkh, dkh, &src[1]))
        return false;
      if (!take(value_t, OpType::kTranspose, &nd) || !transposed(g.nodes[nd]) ||
          !slice(g.nodes[nd].inputs[0], h * dvh, dvh, &src[2]))
        return false;
      for (int j = 0; j < 3; ++j) {
        if (h == 0) kqv[j] = src[j];
        if (src[j] != kqv[j]) return false;
      }
    }
    // The sources cover exactly the heads' channels, over the grid's N positions.
    return is_bmn(kqv[0], heads * dkh, n) && is_bmn(kqv[1], heads * dkh, n) && is_bmn(kqv[2], heads * dvh, n);
  }
};

}  // namespace

std::unique_ptr<Pass> create_fuse_efficient_attention_pass() {
  return std::make_unique<FuseEfficientAttentionPass>();
}

}  // namespace vitrt
