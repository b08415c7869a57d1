// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_nystrom_attention: finds Nyströmformer attention (docs/linear_attention.md, Nyströmformer) as
// torch.onnx.export writes the official code (tools/reference/vitrt_reference/attn_nystrom.py) and rewrites
// it into one NystromAttention:
//   q, k, v split into heads; q (and k, LRA) divided by a constant; landmarks as segment means (one Reshape +
//   ReduceMean when m divides N, else two Slices, Reshapes and ReduceMeans and a Concat: the T2T rule);
//   softmax(q·K̃ᵀ), softmax(Q̃·K̃ᵀ), softmax(Q̃·kᵀ); Z0 = (1 / max column sum)·k2ᵀ with one max over everything
//   (global) or per (b, h) (then unsqueezed by two Reshapes); each iteration
//   Z ← (Z·0.25)·(13I − KV·(15I − KV·(7I − KV))), KV = k2·Z (any number, counted first); (k1·Z)·(k3·v),
//   plus the depthwise V conv when present; heads merged.
// The table cannot check sizes and constants: the rewrite does (segment sizes the T2T rule's, the three
// multiples of the identity, 0.25 and 1, the reductions' axes, the conv's geometry), and finally that the
// fused op infers the very shapes the pattern produced.
#include <cmath>
#include <map>
#include <tuple>

#include "ops/nystrom_attention_geometry.h"
#include "ops/op_registry.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

using Ops = std::vector<PatternOp>;

Ops operator+(Ops a, const Ops& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool softmax_last(const Node& n) {
  const int32_t axis = std::get<SoftmaxAttrs>(n.attrs).axis;
  return axis == -1 || axis == 3;
}

// The form of one exported block: which of the official variants it is.
struct Form {
  bool conv;      // the depthwise V conv is added
  bool k_scaled;  // k divided too (LRA); else only q (T2T-ViT), and kᵀ transposes the split keys directly
  bool split;     // m does not divide N: two segment sizes
  bool per_head;  // Z0's max per (b, h) ("exact") instead of over everything ("original")
  bool div;       // q (and k) divided by the constant; else multiplied by its reciprocal (a power of two)
  bool operator<(const Form& o) const {
    return std::tie(conv, k_scaled, split, per_head, div) <
           std::tie(o.conv, o.k_scaled, o.split, o.per_head, o.div);
  }
};

// Segment means of x ([B,h,N,d]) into `out` [B,h,m,d].
Ops landmarks(const std::string& x, const std::string& out, bool split) {
  if (!split) return {{out + ".r", OpType::kReshape, {x}}, {out, OpType::kReduceMean, {out + ".r"}}};
  return {{out + ".a.s", OpType::kSlice, {x}},
          {out + ".a.r", OpType::kReshape, {out + ".a.s"}},
          {out + ".a", OpType::kReduceMean, {out + ".a.r"}},
          {out + ".b.s", OpType::kSlice, {x}},
          {out + ".b.r", OpType::kReshape, {out + ".b.s"}},
          {out + ".b", OpType::kReduceMean, {out + ".b.r"}},
          {out, OpType::kConcat, {out + ".a", out + ".b"}}};
}

Pattern nystrom_pattern(int iterations, const Form& f) {
  Ops ops = {{"q.heads", OpType::kReshape, {"q_in"}},
             {"q.split", OpType::kTranspose, {"q.heads"}, perm_is({0, 2, 1, 3})},
             {"q", f.div ? OpType::kDiv : OpType::kMul, {"q.split", "q_scale"}},
             {"k.heads", OpType::kReshape, {"k_in"}},
             {"v.heads", OpType::kReshape, {"v_in"}},
             {"v", OpType::kTranspose, {"v.heads"}, perm_is({0, 2, 1, 3})}};
  if (f.k_scaled)
    ops = ops + Ops{{"k.split", OpType::kTranspose, {"k.heads"}, perm_is({0, 2, 1, 3})},
                    {"k", f.div ? OpType::kDiv : OpType::kMul, {"k.split", "k_scale"}},
                    {"kt", OpType::kTranspose, {"k"}, perm_is({0, 1, 3, 2})}};
  else
    ops = ops + Ops{{"k", OpType::kTranspose, {"k.heads"}, perm_is({0, 2, 1, 3})},
                    {"kt", OpType::kTranspose, {"k"}, perm_is({0, 1, 3, 2})}};
  ops = ops + landmarks("q", "ql", f.split) + landmarks("k", "kl", f.split);
  ops = ops + Ops{{"klt", OpType::kTranspose, {"kl"}, perm_is({0, 1, 3, 2})},
                  {"k1.s", OpType::kMatMul, {"q", "klt"}},
                  {"k1", OpType::kSoftmax, {"k1.s"}, softmax_last},
                  {"k2.s", OpType::kMatMul, {"ql", "klt"}},
                  {"k2", OpType::kSoftmax, {"k2.s"}, softmax_last},
                  {"k3.s", OpType::kMatMul, {"ql", "kt"}},
                  {"k3", OpType::kSoftmax, {"k3.s"}, softmax_last},
                  {"colsum", OpType::kReduceSum, {"k2"}},
                  {"top", OpType::kReduceMax, {"colsum"}}};
  std::string top = "top";
  if (f.per_head) {
    ops = ops + Ops{{"top.u1", OpType::kReshape, {"top"}}, {"top.u2", OpType::kReshape, {"top.u1"}}};
    top = "top.u2";
  }
  ops = ops + Ops{{"recip", OpType::kDiv, {"one", top}},
                  {"k2t", OpType::kTranspose, {"k2"}, perm_is({0, 1, 3, 2})},
                  {"z0", OpType::kMul, {"recip", "k2t"}}};
  for (int i = 0; i < iterations; ++i) {
    const std::string z = "z" + std::to_string(i), n = "it" + std::to_string(i) + ".";
    ops = ops + Ops{{n + "kv", OpType::kMatMul, {"k2", z}},
                    {n + "a", OpType::kSub, {n + "eye7", n + "kv"}},
                    {n + "b", OpType::kMatMul, {n + "kv", n + "a"}},
                    {n + "c", OpType::kSub, {n + "eye15", n + "b"}},
                    {n + "e", OpType::kMatMul, {n + "kv", n + "c"}},
                    {n + "f", OpType::kSub, {n + "eye13", n + "e"}},
                    {n + "zq", OpType::kMul, {z, n + "quarter"}},
                    {"z" + std::to_string(i + 1), OpType::kMatMul, {n + "zq", n + "f"}}};
  }
  ops = ops + Ops{{"left", OpType::kMatMul, {"k1", "z" + std::to_string(iterations)}},
                  {"right", OpType::kMatMul, {"k3", "v"}},
                  {"product", OpType::kMatMul, {"left", "right"}}};
  std::string sum = "product";
  if (f.conv) {
    ops = ops + Ops{{"vc", OpType::kConv2d, {"v", "conv_w", ""}}, {"sum", OpType::kAdd, {"product", "vc"}}};
    sum = "sum";
  }
  ops = ops + Ops{{"merged", OpType::kTranspose, {sum}, perm_is({0, 2, 1, 3})},
                  {"out", OpType::kReshape, {"merged"}}};
  return {"nystrom_attention", ops, {}};
}

// The iterations feeding a Nyström-shaped root, counted along Z ← MatMul(Mul(Z, ·), ·) back to Z0 = Mul;
// -1 when the root does not lead to one. Only picks which pattern to try: the pattern checks everything.
int nystrom_iterations(const Graph& g, const GraphIndex& index, size_t root) {
  auto producer = [&](int32_t t, OpType type) -> const Node* {
    if (t == kAbsent || index.producer[t] < 0) return nullptr;
    const Node& n = g.nodes[index.producer[t]];
    return n.type == type ? &n : nullptr;
  };
  const Node* n = producer(g.nodes[root].inputs[0], OpType::kTranspose);
  if (!n || index.producer[n->inputs[0]] < 0) return -1;
  const Node* sum = &g.nodes[index.producer[n->inputs[0]]];
  if (sum->type == OpType::kAdd) sum = producer(sum->inputs[0], OpType::kMatMul);
  n = sum && sum->type == OpType::kMatMul ? producer(sum->inputs[0], OpType::kMatMul) : nullptr;  // left
  if (!n || n->inputs.size() != 2) return -1;
  int32_t z = n->inputs[1];
  for (int steps = 0; steps < 10000; ++steps) {
    if (producer(z, OpType::kMul)) return steps;  // Z0
    const Node* step = producer(z, OpType::kMatMul);
    const Node* quarter = step ? producer(step->inputs[0], OpType::kMul) : nullptr;
    if (!quarter) return -1;
    z = quarter->inputs[0];
  }
  return -1;
}

Shape at_batch1(Shape s) {
  for (int i = 0; i < s.rank; ++i)
    if (s[i] == kDynamicDim) s[i] = 1;
  return s;
}

bool scalar_is(const Graph& g, int32_t t, float want) {
  const Tensor& c = g.tensors[t];
  return c.is_constant && c.dtype == DType::kFloat32 && c.shape.numel() == 1 &&
         c.constant.size >= sizeof(float) && *c.f32() == want;
}

bool scalar_positive(const Graph& g, int32_t t, float* v) {
  const Tensor& c = g.tensors[t];
  if (!c.is_constant || c.dtype != DType::kFloat32 || c.shape.numel() != 1 || c.constant.size < sizeof(float))
    return false;
  *v = *c.f32();
  return std::isfinite(*v) && *v > 0;
}

// value·I [m,m] (also with leading 1s), as a constant.
bool scaled_identity(const Graph& g, int32_t t, int64_t m, float value) {
  const Tensor& c = g.tensors[t];
  if (!c.is_constant || c.dtype != DType::kFloat32 || c.shape.rank < 2 || c.shape.numel() != m * m ||
      c.shape[c.shape.rank - 1] != m || c.constant.size < sizeof(float) * static_cast<size_t>(m * m))
    return false;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j)
      if (c.f32()[i * m + j] != (i == j ? value : 0.0f)) return false;
  return true;
}

// A reduction over one axis `axis` (or its negative form) of a rank-`rank` tensor, without keepdims.
bool reduces_axis(const Node& n, int rank, int axis) {
  const auto& a = std::get<ReduceMeanAttrs>(n.attrs);
  return !a.keepdims && a.axes.size() == 1 && (a.axes[0] == axis || a.axes[0] == axis - rank);
}

bool slice_is_exact(const Node& n, int64_t start, int64_t end, int64_t len) {
  const auto& s = std::get<SliceAttrs>(n.attrs);
  const int64_t e = s.end > len ? len : s.end;
  return (s.axis == 2 || s.axis == -2) && s.step == 1 && s.start == start && e == end;
}

bool shape_is(const Graph& g, const Match& m, const std::string& value, const Shape& want) {
  return at_batch1(g.tensors[m.tensor(value)].shape) == want;
}

// The segment means of the match's `out` (landmarks above) follow the T2T rule for n tokens, m landmarks.
bool landmarks_ok(const Graph& g, const Match& m, const std::string& out, bool split, int64_t h, int64_t n,
                  int64_t lm, int64_t d) {
  const int64_t segs = n / lm, small = (segs + 1) * lm - n;
  if (!shape_is(g, m, out, Shape{1, h, lm, d})) return false;
  if (!split)
    return n % lm == 0 && shape_is(g, m, out + ".r", Shape{1, h, lm, segs, d}) &&
           reduces_axis(m.node(g, out), 5, 3);
  const auto& cat = std::get<ConcatAttrs>(m.node(g, out).attrs);
  return n % lm != 0 && (cat.axis == 2 || cat.axis == -2) &&
         slice_is_exact(m.node(g, out + ".a.s"), 0, small * segs, n) &&
         slice_is_exact(m.node(g, out + ".b.s"), small * segs, n, n) &&
         shape_is(g, m, out + ".a.r", Shape{1, h, small, segs, d}) &&
         shape_is(g, m, out + ".b.r", Shape{1, h, lm - small, segs + 1, d}) &&
         reduces_axis(m.node(g, out + ".a"), 5, 3) && reduces_axis(m.node(g, out + ".b"), 5, 3);
}

bool rewrite_nystrom(const Graph& g, const Match& m, int iterations, const Form& f, Node* fused) {
  const Shape qh = at_batch1(g.tensors[m.tensor("q.heads")].shape);  // [1,N,h,d]
  const Shape kl = at_batch1(g.tensors[m.tensor("kl")].shape);       // [1,h,m,d]
  if (qh.rank != 4 || kl.rank != 4) return false;
  const int64_t n = qh[1], h = qh[2], d = qh[3], lm = kl[2];
  if (lm < 1 || lm > n || !shape_is(g, m, "k.heads", qh) || !shape_is(g, m, "v.heads", qh) ||
      !shape_is(g, m, "out", Shape{1, n, h * d}) || !landmarks_ok(g, m, "ql", f.split, h, n, lm, d) ||
      !landmarks_ok(g, m, "kl", f.split, h, n, lm, d) || !shape_is(g, m, "k2", Shape{1, h, lm, lm}) ||
      !reduces_axis(m.node(g, "colsum"), 4, 2) || !scalar_is(g, m.tensor("one"), 1.0f))
    return false;
  NystromAttentionAttrs a;
  // The importer writes q / c as q · fl(1/c) (its ".reciprocal" constant) when c is a power of two: the
  // scale is that constant. Any other c stays a Div, and the op multiplies by fl(1/c) (a last-bit
  // difference, docs/linear_attention.md).
  a.k_scale = 1.0f;
  if (!scalar_positive(g, m.tensor("q_scale"), &a.q_scale) ||
      (f.k_scaled && !scalar_positive(g, m.tensor("k_scale"), &a.k_scale)))
    return false;
  if (f.div) {
    a.q_scale = 1.0f / a.q_scale;
    a.k_scale = f.k_scaled ? 1.0f / a.k_scale : 1.0f;
    if (!std::isfinite(a.q_scale) || !std::isfinite(a.k_scale) || a.q_scale <= 0 || a.k_scale <= 0)
      return false;
  }
  if (f.per_head) {
    if (!reduces_axis(m.node(g, "top"), 3, 2) || !shape_is(g, m, "top.u2", Shape{1, h, 1, 1})) return false;
  } else {
    // One max over the batch, heads and columns: a scalar whatever the batch.
    const auto& r = std::get<ReduceMeanAttrs>(m.node(g, "top").attrs);
    if (r.keepdims || !(r.axes.empty() || r.axes.size() == 3) ||
        g.tensors[m.tensor("top")].shape.numel() != 1 || g.tensors[m.tensor("top")].shape.rank != 0)
      return false;
  }
  for (int i = 0; i < iterations; ++i) {
    const std::string p = "it" + std::to_string(i) + ".";
    if (!scaled_identity(g, m.tensor(p + "eye7"), lm, 7.0f) ||
        !scaled_identity(g, m.tensor(p + "eye15"), lm, 15.0f) ||
        !scaled_identity(g, m.tensor(p + "eye13"), lm, 13.0f) ||
        !scalar_is(g, m.tensor(p + "quarter"), 0.25f))
      return false;
  }
  fused->inputs = {m.tensor("q_in"), m.tensor("k_in"), m.tensor("v_in")};
  if (f.conv) {
    const auto& c = std::get<Conv2dAttrs>(m.node(g, "vc").attrs);
    const Shape& w = g.tensors[m.tensor("conv_w")].shape;
    if (w.rank != 4 || w[0] != h || w[1] != 1 || w[3] != 1 || w[2] % 2 == 0 || c.groups != h ||
        c.stride_h != 1 || c.stride_w != 1 || c.dilation_h != 1 || c.dilation_w != 1 || c.pad_h != w[2] / 2 ||
        c.pad_w != 0 || c.activation != Activation::kNone || c.channels_last ||
        !g.tensors[m.tensor("conv_w")].is_constant)
      return false;
    fused->inputs.push_back(m.tensor("conv_w"));
  }
  a.num_heads = static_cast<int32_t>(h);
  a.landmarks = static_cast<int32_t>(lm);
  a.init = f.per_head ? NystromInit::kPerHead : NystromInit::kGlobal;
  a.iterations = iterations;
  fused->type = OpType::kNystromAttention;
  fused->attrs = a;
  fused->outputs = {m.tensor("out")};
  return true;
}

// The fused node must infer exactly the shapes the matched ops produce.
bool same_shapes(const Graph& g, const Node& fused) {
  Shape in[kMaxOpInputs];
  const Shape* src[kMaxOpInputs] = {};
  for (size_t i = 0; i < fused.inputs.size(); ++i) {
    in[i] = at_batch1(g.tensors[fused.inputs[i]].shape);
    src[i] = &in[i];
  }
  Shape dst[kMaxOpOutputs];
  if (!infer_node_shapes(fused, src, static_cast<int>(fused.inputs.size()), dst).ok()) return false;
  return dst[0] == at_batch1(g.tensors[fused.outputs[0]].shape);
}

class FuseNystromAttentionPass final : public Pass {
 public:
  const char* name() const override { return "fuse_nystrom_attention"; }
  const char* description() const override {
    return "Nyströmformer attention as torch.onnx.export writes it -> NystromAttention";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    const auto is_root = [](const Node& n) { return n.type == OpType::kReshape; };
    const auto fuse = [&](const GraphIndex& index, size_t root, Match* m, Node* fused) {
      const int iterations = nystrom_iterations(g, index, root);
      return iterations >= 0 && iterations <= kMaxNystromIterations &&
             try_forms(g, index, root, iterations, m, fused) && same_shapes(g, *fused);
    };
    if (fuse_at_roots(g, ctx, is_root, fuse)) *modified = true;
    return Status::Ok();
  }

 private:
  bool try_forms(const Graph& g, const GraphIndex& index, size_t i, int iterations, Match* m,
                 Node* fused) const {
    for (bool conv : {true, false})
      for (bool k_scaled : {true, false})
        for (bool split : {true, false})
          for (bool per_head : {false, true})
            for (bool div : {false, true}) {
              const Form f{conv, k_scaled, split, per_head, div};
              auto key = std::make_pair(iterations, f);
              auto it = patterns_.find(key);
              if (it == patterns_.end()) it = patterns_.emplace(key, nystrom_pattern(iterations, f)).first;
              if (match_pattern(g, index, it->second, i, m) && rewrite_nystrom(g, *m, iterations, f, fused))
                return true;
            }
    return false;
  }

  mutable std::map<std::pair<int, Form>, Pattern> patterns_;  // by iterations and form, built on use
};

}  // namespace

std::unique_ptr<Pass> create_fuse_nystrom_attention_pass() {
  return std::make_unique<FuseNystromAttentionPass>();
}

}  // namespace vitrt
