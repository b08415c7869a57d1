// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_external_attention: EANet's external attention written as plain ops (docs/linear_attention.md,
// "External Attention"; what torch.onnx.export writes for tools/reference/vitrt_reference/attn_external.py)
// becomes one ExternalAttention op:
//   multi-head (EAMLP):  x [B,N,C] -> Reshape [B,N,h,d] -> Transpose (0,2,1,3) -> Linear (linear_0)
//                        -> Softmax over the tokens (axis 2) -> ÷ (ReduceSum over the slots + eps)
//                        -> Linear (linear_1) -> Transpose (0,2,1,3) -> Reshape [B,N,C]
//   one head (xmu):      x [B,N,d] -> Linear (mk) -> Softmax (axis 1) -> ÷ ReduceSum over the slots
//                        -> Linear (mv)
// with or without either Linear's bias and the eps Add. The rewrite checks what the tables cannot: the
// softmax runs over the tokens, the slot sum over the last axis with keepdims, eps is a finite scalar
// constant >= 0, the Linears have no epilogue or residual, the head split and merge are head-major (the
// Reshape shapes are [1,N,h,d] and [1,N,C] at batch 1, whatever their targets wrote), and the fused op
// infers the very shape the pattern produced. Every intermediate has its readers inside the match.
#include <cmath>

#include "ops/op_registry.h"
#include "planner/pass.h"
#include "planner/pattern.h"

namespace vitrt {
namespace {

using Ops = std::vector<PatternOp>;

bool plain_linear(const Node& n) {
  return std::get<LinearAttrs>(n.attrs).activation == Activation::kNone;
}

struct ExternalPattern {
  Pattern pattern;
  bool heads;  // the multi-head form (split and merge around the Linears)
};

// Every form: multi-head or one head, b0 and b1 present or absent, with or without the eps Add.
std::vector<ExternalPattern> external_patterns() {
  std::vector<ExternalPattern> out;
  for (bool heads : {true, false})
    for (bool b0 : {true, false})
      for (bool b1 : {true, false})
        for (bool eps : {true, false}) {
          Ops ops;
          std::string x = "x_in";
          if (heads) {
            ops.push_back({"x.heads", OpType::kReshape, {"x_in"}});
            ops.push_back({"x", OpType::kTranspose, {"x.heads"}, perm_is({0, 2, 1, 3})});
            x = "x";
          }
          ops.push_back({"logits", OpType::kLinear, {x, "w0", b0 ? "b0" : "", ""}, plain_linear});
          ops.push_back({"attn", OpType::kSoftmax, {"logits"}});
          ops.push_back({"slot_sum", OpType::kReduceSum, {"attn"}});
          if (eps) ops.push_back({"denom", OpType::kAdd, {"slot_sum", "eps"}});
          ops.push_back({"normed", OpType::kDiv, {"attn", eps ? "denom" : "slot_sum"}});
          ops.push_back(
              {heads ? "y" : "out", OpType::kLinear, {"normed", "w1", b1 ? "b1" : "", ""}, plain_linear});
          if (heads) {
            ops.push_back({"merged", OpType::kTranspose, {"y"}, perm_is({0, 2, 1, 3})});
            ops.push_back({"out", OpType::kReshape, {"merged"}});
          }
          out.push_back({{"external_attention", ops, {}}, heads});
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

// axis (possibly negative) of a rank-`rank` tensor is `want`.
bool axis_is(int32_t axis, int rank, int want) {
  return (axis < 0 ? axis + rank : axis) == want;
}

bool rewrite_external_attention(const Graph& g, const Match& m, const ExternalPattern& ep, Node* fused) {
  const Shape x = shape_of(g, m, "x_in"), logits = shape_of(g, m, "logits");
  const int rank = logits.rank;
  if (x.rank != 3 || rank != (ep.heads ? 4 : 3)) return false;
  if (!axis_is(std::get<SoftmaxAttrs>(m.node(g, "attn").attrs).axis, rank, rank - 2)) return false;
  const auto& sum = std::get<ReduceMeanAttrs>(m.node(g, "slot_sum").attrs);
  if (sum.axes.size() != 1 || !axis_is(sum.axes[0], rank, rank - 1) || !sum.keepdims) return false;
  ExternalAttentionAttrs a;
  a.eps = 0.0f;
  if (m.tensors.count("eps")) {
    const Tensor& e = g.tensors[m.tensor("eps")];
    if (!e.is_constant || e.dtype != DType::kFloat32 || e.shape.numel() != 1 || e.shape.rank > rank ||
        e.constant.size < sizeof(float))
      return false;
    a.eps = *e.f32();
    if (!std::isfinite(a.eps) || a.eps < 0.0f) return false;
  }
  if (ep.heads) {
    // Head-major split and merge: [1,N,C] -> [1,N,h,d] -> [1,h,N,d] ... [1,h,N,d] -> [1,N,h,d] -> [1,N,C].
    const Shape split = shape_of(g, m, "x.heads");
    if (split.rank != 4 || split[0] != 1 || split[1] != x[1] || split[2] < 1 || split[2] * split[3] != x[2] ||
        shape_of(g, m, "merged") != split || shape_of(g, m, "out") != x)
      return false;
    a.num_heads = static_cast<int32_t>(split[2]);
  }
  fused->type = OpType::kExternalAttention;
  fused->attrs = a;
  auto optional = [&](const char* name) { return m.tensors.count(name) ? m.tensor(name) : kAbsent; };
  fused->inputs = {m.tensor("x_in"), m.tensor("w0"), optional("b0"), m.tensor("w1"), optional("b1")};
  fused->outputs = {m.tensor("out")};
  // The fused op must infer exactly the shape the matched ops produce (weights [S,d] and [d,S], biases).
  Shape in[5];
  const Shape* src[5] = {};
  for (int i = 0; i < 5; ++i) {
    if (fused->inputs[i] == kAbsent) continue;
    in[i] = at_batch1(g.tensors[fused->inputs[i]].shape);
    src[i] = &in[i];
  }
  Shape dst[kMaxOpOutputs];
  return infer_node_shapes(*fused, src, 5, dst).ok() && dst[0] == shape_of(g, m, "out");
}

class FuseExternalAttentionPass final : public Pass {
 public:
  const char* name() const override { return "fuse_external_attention"; }
  const char* description() const override {
    return "EANet external attention (Linear, softmax over tokens, slot normalisation, Linear) -> "
           "ExternalAttention";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    *modified = fuse_at_roots(
        g, ctx, [](const Node& n) { return n.type == OpType::kReshape || n.type == OpType::kLinear; },
        [&](const GraphIndex& index, size_t root, Match* m, Node* fused) {
          for (const ExternalPattern& p : patterns_)
            if (match_pattern(g, index, p.pattern, root, m) && rewrite_external_attention(g, *m, p, fused))
              return true;
          return false;
        });
    return Status::Ok();
  }

 private:
  const std::vector<ExternalPattern> patterns_ = external_patterns();
};

}  // namespace

std::unique_ptr<Pass> create_fuse_external_attention_pass() {
  return std::make_unique<FuseExternalAttentionPass>();
}

}  // namespace vitrt
