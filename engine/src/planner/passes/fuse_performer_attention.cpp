// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_performer_attention: lucidrains' Performer (FAVOR+, non-causal) as torch.onnx.export writes
// tools/reference/vitrt_reference/attn_performer.py once the importer has lowered its Einsums onto Transpose
// + Reshape + MatMul (converter/onnx/lower_einsum.cpp) becomes one PerformerAttention op
// (docs/linear_attention.md, "Performer"). From the projected tokens q, k, v [B,N,C] (to_q, to_k, to_v stay
// Linear ops):
//   heads      x [B,N,C] -> Reshape [B,N,h,d] -> Transpose (0,2,1,3)                      for q, k and v
//   projection u = Reshape(MatMul(Reshape(x·dn) [B·h·N,d], Transpose(W) [d,m])) [B,h,N,m]  for q and k
//   softmax    g = Reshape((ReduceSum(x·x, last) · 0.5) · dn²) [B,h,N,1];
//              φ = (exp((u − g) − max) + 1e-4) · ratio, the max ReduceMax of u over the query's features, for
//              the keys over the item's tokens and features (per head) or over everything (global)
//   ReLU       φ = relu(u) + 1e-3
//   linear     s = ReduceSum(φk, tokens) [B,h,m]; D⁻¹ = 1 ÷ Reshape(MatMul(φq, Reshape(s) [B,h,m,1])) [B,h,N]
//              (× 1, as the export writes 1.0 / x); out = Transpose(MatMul(Transpose(MatMul(φkᵀ, v)), φqᵀ))
//              · Reshape(D⁻¹) [B,h,N,1]; Transpose (0,2,1,3) -> Reshape [B,N,C]
// The rewrite checks what the tables cannot: every reduction's axes and keepdims, every constant equal to the
// float the op uses (dn = d^-1/4, dn², m^-1/2 within two float steps, see kTracedScalarUlps; 0.5, the eps and
// 1 exactly), W a constant [m,d] read by both projections,
// the head split and merge head-major with one h and d, each Reshape producing the shape the formula needs,
// and the fused op inferring the very shape the pattern produced. Every intermediate has its readers inside
// the match. The `no_projection` option (softmax over features and tokens, no W) is another mechanism and no
// pattern here.
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/performer_features.h"
#include "ops/op_registry.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

using Ops = std::vector<PatternOp>;

Ops operator+(Ops a, const Ops& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The key stabiliser of the softmax kernel, or none (the ReLU kernel).
enum class KeyMax { kPerHead, kGlobal, kNone };

struct PerformerPattern {
  Pattern pattern;
  KeyMax key_max;
  bool times_one;  // D⁻¹ written as (1 ÷ x) · 1
};

// src [B,N,C] -> out [B,h,N,d]
Ops split_heads(const std::string& src, const std::string& out) {
  return {{out + ".heads", OpType::kReshape, {src}},
          {out, OpType::kTranspose, {out + ".heads"}, perm_is({0, 2, 1, 3})}};
}

// φ(x) of the heads x (p = "q" or "k"), named p + ".phi".
Ops features(const std::string& p, KeyMax key_max) {
  Ops ops = {{p + ".scaled", OpType::kMul, {p, p + ".dn"}},
             {p + ".w_t", OpType::kTranspose, {"proj"}, perm_is({1, 0})},
             {p + ".rows", OpType::kReshape, {p + ".scaled"}},
             {p + ".u_rows", OpType::kMatMul, {p + ".rows", p + ".w_t"}},
             {p + ".u", OpType::kReshape, {p + ".u_rows"}}};
  if (key_max == KeyMax::kNone)
    return ops + Ops{{p + ".relu", OpType::kRelu, {p + ".u"}},
                     {p + ".phi", OpType::kAdd, {p + ".relu", p + ".eps"}}};
  return ops + Ops{{p + ".sq", OpType::kMul, {p, p}},
                   {p + ".sum_sq", OpType::kReduceSum, {p + ".sq"}},
                   {p + ".half_sq", OpType::kMul, {p + ".sum_sq", p + ".half"}},
                   {p + ".g_rows", OpType::kMul, {p + ".half_sq", p + ".dn_sq"}},
                   {p + ".g", OpType::kReshape, {p + ".g_rows"}},
                   {p + ".max", OpType::kReduceMax, {p + ".u"}},
                   {p + ".centred", OpType::kSub, {p + ".u", p + ".g"}},
                   {p + ".shifted", OpType::kSub, {p + ".centred", p + ".max"}},
                   {p + ".exp", OpType::kExp, {p + ".shifted"}},
                   {p + ".exp_eps", OpType::kAdd, {p + ".exp", p + ".eps"}},
                   {p + ".phi", OpType::kMul, {p + ".exp_eps", p + ".ratio"}}};
}

std::vector<PerformerPattern> performer_patterns() {
  std::vector<PerformerPattern> out;
  for (KeyMax key_max : {KeyMax::kPerHead, KeyMax::kGlobal, KeyMax::kNone})
    for (bool times_one : {true, false}) {
      Ops ops = split_heads("q_in", "q") + split_heads("k_in", "k") + split_heads("v_in", "v") +
                features("q", key_max) + features("k", key_max);
      ops = ops + Ops{{"k_sum", OpType::kReduceSum, {"k.phi"}},
                      {"k_sum.col", OpType::kReshape, {"k_sum"}},
                      {"denom.col", OpType::kMatMul, {"q.phi", "k_sum.col"}},
                      {"denom", OpType::kReshape, {"denom.col"}},
                      {"recip", OpType::kDiv, {"one", "denom"}}};
      if (times_one) ops.push_back({"d_inv", OpType::kMul, {"recip", "one_again"}});
      ops = ops + Ops{{"k.phi_t", OpType::kTranspose, {"k.phi"}, perm_is({0, 1, 3, 2})},
                      {"context", OpType::kMatMul, {"k.phi_t", "v"}},
                      {"context_t", OpType::kTranspose, {"context"}, perm_is({0, 1, 3, 2})},
                      {"q.phi_t", OpType::kTranspose, {"q.phi"}, perm_is({0, 1, 3, 2})},
                      {"product_t", OpType::kMatMul, {"context_t", "q.phi_t"}},
                      {"product", OpType::kTranspose, {"product_t"}, perm_is({0, 1, 3, 2})},
                      {"d_inv.col", OpType::kReshape, {times_one ? "d_inv" : "recip"}},
                      {"attended", OpType::kMul, {"product", "d_inv.col"}},
                      {"merged", OpType::kTranspose, {"attended"}, perm_is({0, 2, 1, 3})},
                      {"out", OpType::kReshape, {"merged"}}};
      out.push_back({{"performer_attention", ops, {}}, key_max, times_one});
    }
  return out;
}

// The batch axis at 1 (static checks only).
Shape at_batch1(Shape s) {
  for (int i = 0; i < s.rank; ++i)
    if (s[i] == kDynamicDim) s[i] = 1;
  return s;
}

Shape shape_of(const Graph& g, const Match& m, const std::string& value) {
  return at_batch1(g.tensors[m.tensor(value)].shape);
}

// A float32 scalar constant (any rank, one value) that is `want` exactly, or with `ulps` > 0 within that many
// float steps of it.
bool scalar_is(const Graph& g, const Match& m, const std::string& capture, float want, int ulps = 0) {
  const Tensor& c = g.tensors[m.tensor(capture)];
  if (!c.is_constant || c.dtype != DType::kFloat32 || c.shape.numel() != 1 || c.shape.rank > 4 ||
      c.constant.size < sizeof(float))
    return false;
  float lo = want, hi = want;
  for (int i = 0; i < ulps; ++i) {
    lo = std::nextafter(lo, -INFINITY);
    hi = std::nextafter(hi, INFINITY);
  }
  return *c.f32() >= lo && *c.f32() <= hi;
}

// d^-1/4, its square and m^-1/2 as the export computes them: with dynamic shapes torch.onnx traces them as
// float32 Pow ops on the sizes (the importer folds them), where the module in PyTorch (and the op,
// performer_scalars) rounds the double result once, so the two differ by a float step or so (d = 64: the
// export's dn² is 0.12499999, the op's 0.125). Within 2 steps is the same formula; anything else is not.
constexpr int kTracedScalarUlps = 2;

// The reduction of `value` runs over exactly `want` (axes of a rank-`rank` input, negative ones allowed).
bool reduces(const Graph& g, const Match& m, const std::string& value, int rank, std::vector<int32_t> want,
             bool keepdims) {
  const auto& a = std::get<ReduceMeanAttrs>(m.node(g, value).attrs);
  std::vector<int32_t> axes;
  for (int32_t x : a.axes) axes.push_back(x < 0 ? x + rank : x);
  std::sort(axes.begin(), axes.end());
  return a.keepdims == keepdims && axes == want;
}

// One side's (q or k) feature map: its ops produce the shapes the formula needs for heads x [B,h,N,d] and the
// projection [m,d], and its constants are the op's.
bool features_ok(const Graph& g, const Match& m, const std::string& p, KeyMax key_max, const Shape& x,
                 int64_t mf, const ref::PerformerScalars& sc) {
  const int64_t b = x[0], h = x[1], n = x[2], d = x[3];
  const Shape rows = g.tensors[m.tensor(p + ".rows")].shape;  // [B·h·N, d]: each row a token of one head
  if (rows.rank != 2 || rows[1] != d || shape_of(g, m, p + ".w_t") != Shape{d, mf} ||
      shape_of(g, m, p + ".u") != Shape{b, h, n, mf} || !scalar_is(g, m, p + ".dn", sc.dn, kTracedScalarUlps))
    return false;
  if (key_max == KeyMax::kNone) return scalar_is(g, m, p + ".eps", ref::kPerformerGeneralizedEps);
  const bool query = p == "q";
  const bool max_ok = query                         ? reduces(g, m, p + ".max", 4, {3}, true)
                      : key_max == KeyMax::kPerHead ? reduces(g, m, p + ".max", 4, {2, 3}, true)
                                                    : reduces(g, m, p + ".max", 4, {0, 1, 2, 3}, false) ||
                                                          reduces(g, m, p + ".max", 4, {0, 1, 2, 3}, true);
  return max_ok && reduces(g, m, p + ".sum_sq", 4, {3}, false) &&
         shape_of(g, m, p + ".g") == Shape{b, h, n, 1} && scalar_is(g, m, p + ".half", 0.5f) &&
         scalar_is(g, m, p + ".dn_sq", sc.dn_sq, kTracedScalarUlps) &&
         scalar_is(g, m, p + ".eps", ref::kPerformerSoftmaxEps) &&
         scalar_is(g, m, p + ".ratio", sc.ratio, kTracedScalarUlps);
}

bool rewrite_performer(const Graph& g, const Match& m, const PerformerPattern& pp, Node* fused) {
  const Shape q_in = shape_of(g, m, "q_in"), k_in = shape_of(g, m, "k_in");
  const Shape q = shape_of(g, m, "q"), k = shape_of(g, m, "k");  // [B,h,N,d], B at 1 when dynamic
  const Tensor& w = g.tensors[m.tensor("proj")];
  if (q_in.rank != 3 || k_in.rank != 3 || q.rank != 4 || k.rank != 4 || shape_of(g, m, "v_in") != k_in ||
      shape_of(g, m, "v") != k || k_in[2] != q_in[2] || k_in[0] != q_in[0])
    return false;
  const int64_t b = q_in[0], h = q[1], nq = q[2], d = q[3], nk = k[2];
  // Head-major split of every input and merge of the output, with one h and d.
  if (h < 1 || d < 1 || h * d != q_in[2] || shape_of(g, m, "q.heads") != Shape{b, nq, h, d} ||
      shape_of(g, m, "k.heads") != Shape{b, nk, h, d} || shape_of(g, m, "v.heads") != Shape{b, nk, h, d} ||
      shape_of(g, m, "merged") != Shape{b, nq, h, d} || shape_of(g, m, "out") != q_in)
    return false;
  // W: one float32 constant [m,d].
  if (!w.is_constant || w.dtype != DType::kFloat32 || w.shape.rank != 2 || w.shape[1] != d ||
      w.shape[0] < 1 || w.constant.size != sizeof(float) * static_cast<size_t>(w.shape.numel()))
    return false;
  const int64_t mf = w.shape[0];
  const ref::PerformerScalars sc = ref::performer_scalars(d, mf);
  if (!features_ok(g, m, "q", pp.key_max, q, mf, sc) || !features_ok(g, m, "k", pp.key_max, k, mf, sc))
    return false;
  // The normaliser: Σ over the key tokens, as a column, one denominator per query.
  if (!reduces(g, m, "k_sum", 4, {2}, false) || shape_of(g, m, "k_sum.col") != Shape{b, h, mf, 1} ||
      shape_of(g, m, "denom") != Shape{b, h, nq} || shape_of(g, m, "d_inv.col") != Shape{b, h, nq, 1} ||
      !scalar_is(g, m, "one", 1.0f) || (pp.times_one && !scalar_is(g, m, "one_again", 1.0f)))
    return false;
  PerformerAttentionAttrs a;
  a.heads = static_cast<int32_t>(h);
  a.kernel = pp.key_max == KeyMax::kNone ? PerformerKernel::kGeneralized : PerformerKernel::kSoftmax;
  a.key_max = pp.key_max == KeyMax::kGlobal ? PerformerKeyMax::kGlobal : PerformerKeyMax::kPerHead;
  fused->type = OpType::kPerformerAttention;
  fused->attrs = a;
  fused->inputs = {m.tensor("q_in"), m.tensor("k_in"), m.tensor("v_in"), m.tensor("proj")};
  fused->outputs = {m.tensor("out")};
  // The fused op must infer exactly the shape the matched ops produce.
  Shape in[4];
  const Shape* src[4];
  for (int i = 0; i < 4; ++i) {
    in[i] = at_batch1(g.tensors[fused->inputs[i]].shape);
    src[i] = &in[i];
  }
  Shape dst[kMaxOpOutputs];
  return infer_node_shapes(*fused, src, 4, dst).ok() && dst[0] == shape_of(g, m, "out");
}

class FusePerformerAttentionPass final : public Pass {
 public:
  const char* name() const override { return "fuse_performer_attention"; }
  const char* description() const override {
    return "Performer FAVOR+ (random-feature softmax or ReLU kernel, linear attention) -> PerformerAttention";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    *modified = fuse_at_roots(
        g, ctx, [](const Node& n) { return n.type == OpType::kReshape; },
        [&](const GraphIndex& index, size_t root, Match* m, Node* fused) {
          for (const PerformerPattern& p : patterns_)
            if (match_pattern(g, index, p.pattern, root, m) && rewrite_performer(g, *m, p, fused))
              return true;
          return false;
        });
    return Status::Ok();
  }

 private:
  const std::vector<PerformerPattern> patterns_ = performer_patterns();
};

}  // namespace

std::unique_ptr<Pass> create_fuse_performer_attention_pass() {
  return std::make_unique<FusePerformerAttentionPass>();
}

}  // namespace vitrt
