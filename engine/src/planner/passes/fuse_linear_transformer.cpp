// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_linear_transformer: the Linear Transformer's attention (idiap/fast-transformers LinearAttention inside
// AttentionLayer; docs/linear_attention.md, KernelizedAttention) as torch.onnx.export writes it and the ONNX
// importer lowers its three Einsums (docs/onnx.md), on q, k, v [B,N,h·d] split into heads [B,N,h,d]:
//   φq = Elu(q) + 1, φk = Elu(k) + 1;  KV = einsum("nshd,nshm->nhmd", φk, v);
//   Z = 1 / (einsum("nlhd,nhd->nlh", φq, Σ_s φk) + eps);  out = einsum("nlhd,nhmd,nlh->nlhm", φq, KV, Z)
// merged back to [B,N,h·d], becomes one KernelizedAttention (EluNormalized, eps). Exactness: the Elu's alpha
// and both added constants are 1, eps is a finite scalar >= 0, the key sum runs over the tokens, every
// transpose and shape is the lowering's, every intermediate is read only inside the block, and the fused op
// infers the block's output shape.
#include <cmath>

#include "ops/op_registry.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

bool is_elu(const Node& n) {
  const auto& a = std::get<UnaryAttrs>(n.attrs);
  return a.kind == UnaryKind::kElu && a.alpha == 1.0f;
}

bool sums_axis1(const Node& n) {
  const auto& a = std::get<ReduceMeanAttrs>(n.attrs);
  return !a.keepdims && a.axes.size() == 1 && (a.axes[0] == 1 || a.axes[0] == -3);
}

Pattern linear_transformer_pattern() {
  return Pattern{"linear_transformer",
                 {{"q.heads", OpType::kReshape, {"q_in"}},
                  {"k.heads", OpType::kReshape, {"k_in"}},
                  {"v.heads", OpType::kReshape, {"v_in"}},
                  {"q.elu", OpType::kUnary, {"q.heads"}, is_elu},
                  {"q.phi", OpType::kAdd, {"q.elu", "one_q"}},
                  {"k.elu", OpType::kUnary, {"k.heads"}, is_elu},
                  {"k.phi", OpType::kAdd, {"k.elu", "one_k"}},
                  // KV = φkᵀ·v per head: [B,h,d,N]·[B,h,N,m] -> [B,h,d,m] -> [B,h,m,d]
                  {"kv.a", OpType::kTranspose, {"k.phi"}, perm_is({0, 2, 3, 1})},
                  {"kv.b", OpType::kTranspose, {"v.heads"}, perm_is({0, 2, 1, 3})},
                  {"kv.p", OpType::kMatMul, {"kv.a", "kv.b"}},
                  {"kv", OpType::kTranspose, {"kv.p"}, perm_is({0, 1, 3, 2})},
                  // Z = 1 / (φq·Σ_s φk + eps): [B,h,N,d]·[B,h,d,1] -> [B,h,N] -> [B,N,h]
                  {"ksum", OpType::kReduceSum, {"k.phi"}, sums_axis1},
                  {"z.a", OpType::kTranspose, {"q.phi"}, perm_is({0, 2, 1, 3})},
                  {"z.b", OpType::kReshape, {"ksum"}},
                  {"z.p", OpType::kMatMul, {"z.a", "z.b"}},
                  {"z.s", OpType::kReshape, {"z.p"}},
                  {"z.t", OpType::kTranspose, {"z.s"}, perm_is({0, 2, 1})},
                  {"z.e", OpType::kAdd, {"z.t", "eps"}},
                  {"z", OpType::kDiv, {"one_r", "z.e"}},
                  // out = (φq·KVᵀ per head) · Z: [B,h,N,d]·[B,h,d,m] -> [B,N,h,m], times Z per (token, head)
                  {"o.a", OpType::kTranspose, {"q.phi"}, perm_is({0, 2, 1, 3})},
                  {"o.b", OpType::kTranspose, {"kv"}, perm_is({0, 1, 3, 2})},
                  {"o.p", OpType::kMatMul, {"o.a", "o.b"}},
                  {"o.ab", OpType::kTranspose, {"o.p"}, perm_is({0, 2, 1, 3})},
                  {"o.a2", OpType::kReshape, {"o.ab"}},
                  {"o.b2", OpType::kReshape, {"z"}},
                  {"o.m", OpType::kMatMul, {"o.a2", "o.b2"}},
                  {"o", OpType::kReshape, {"o.m"}},
                  {"out", OpType::kReshape, {"o"}}},
                 {}};
}

bool scalar_value(const Graph& g, int32_t t, float* v) {
  const Tensor& c = g.tensors[t];
  if (!c.is_constant || c.dtype != DType::kFloat32 || c.shape.numel() != 1 || c.constant.size < sizeof(float))
    return false;
  *v = *c.f32();
  return true;
}

Shape at_batch1(Shape s) {
  for (int i = 0; i < s.rank; ++i)
    if (s[i] == kDynamicDim) s[i] = 1;
  return s;
}

// The shapes the importer's Einsum lowering gives the normaliser and the last product (docs/onnx.md), at
// batch
// 1. Without them a chain of the same ops whose Reshapes mix the heads (z.b as [1,1,d,h], o.b2 as [1,n,h,h])
// would pass every other check and fuse into different arithmetic.
template <typename ShapeOf>
bool lowering_shapes(const ShapeOf& shape, int64_t n, int64_t h, int64_t d, int64_t dv) {
  const Shape z{1, n, h};
  return shape("ksum") == Shape{1, h, d} && shape("z.b") == Shape{1, h, d, 1} &&
         shape("z.p") == Shape{1, h, n, 1} && shape("z.s") == Shape{1, h, n} && shape("z.t") == z &&
         shape("z.e") == z && shape("z") == z && shape("o.a2") == Shape{1, n, h, dv, 1} &&
         shape("o.b2") == Shape{1, n, h, 1, 1} && shape("o.m") == Shape{1, n, h, dv, 1};
}

// The fused node for a match of the pattern rooted at `root`, after the checks the table cannot make.
bool rewrite_linear_transformer(const Graph& g, const Match& m, size_t root, Node* fused) {
  auto shape = [&](const char* v) { return at_batch1(g.tensors[m.tensor(v)].shape); };
  const Shape qh = shape("q.heads"), vh = shape("v.heads");
  if (qh.rank != 4 || vh.rank != 4) return false;
  const int64_t n = qh[1], h = qh[2], d = qh[3], dv = vh[3];
  float one_q, one_k, one_r, eps;
  if (shape("k.heads") != qh || vh != Shape{1, n, h, dv} || shape("q_in") != Shape{1, n, h * d} ||
      shape("k_in") != Shape{1, n, h * d} || shape("v_in") != Shape{1, n, h * dv} ||
      shape("out") != Shape{1, n, h * dv} || shape("o") != Shape{1, n, h, dv} ||
      !lowering_shapes(shape, n, h, d, dv) || !scalar_value(g, m.tensor("one_q"), &one_q) ||
      !scalar_value(g, m.tensor("one_k"), &one_k) || !scalar_value(g, m.tensor("one_r"), &one_r) ||
      !scalar_value(g, m.tensor("eps"), &eps) || one_q != 1.0f || one_k != 1.0f || one_r != 1.0f ||
      !std::isfinite(eps) || eps < 0)
    return false;
  KernelizedAttentionAttrs a;
  a.kind = KernelizedKind::kEluNormalized;
  a.num_heads = static_cast<int32_t>(h);
  a.eps = eps;
  a.scale = 1.0f;
  fused->type = OpType::kKernelizedAttention;
  fused->attrs = a;
  fused->inputs = {m.tensor("q_in"), m.tensor("k_in"), m.tensor("v_in")};
  fused->outputs = g.nodes[root].outputs;
  // The fused op must infer the very shape the block produced.
  const Shape in[3] = {shape("q_in"), shape("k_in"), shape("v_in")};
  const Shape* src[3] = {&in[0], &in[1], &in[2]};
  Shape out[1];
  return infer_node_shapes(*fused, src, 3, out).ok() && out[0] == shape("out");
}

class FuseLinearTransformerPass final : public Pass {
 public:
  const char* name() const override { return "fuse_linear_transformer"; }
  const char* description() const override {
    return "the Linear Transformer's elu+1 feature maps, KV and normaliser einsums -> one "
           "KernelizedAttention";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const auto is_root = [](const Node& n) { return n.type == OpType::kReshape; };
    if (fuse_at_roots(g, ctx, is_root, [&](const GraphIndex& index, size_t root, Match* m, Node* fused) {
          return match_pattern(g, index, pattern_, root, m) && rewrite_linear_transformer(g, *m, root, fused);
        }))
      *modified = true;
    return Status::Ok();
  }

 private:
  const Pattern pattern_ = linear_transformer_pattern();
};

}  // namespace

std::unique_ptr<Pass> create_fuse_linear_transformer_pass() {
  return std::make_unique<FuseLinearTransformerPass>();
}

}  // namespace vitrt
