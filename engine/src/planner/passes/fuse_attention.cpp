// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_attention: finds attention written as plain ops (vitrt-convert --emit primitive, i.e. PyTorch's own
// reshape / permute / unbind / matmul / scale / softmax sequence) and rewrites it into the fused op, so that
// a primitive-emitted model plans and runs exactly like a fused-emitted one:
//   softmax attention (packed qkv, q + packed kv, separate q/k/v, or k and v given as heads [B,h,Nk,d] as
//   the LRA and one_kv_head Linformer exports leave them, merged into tokens ahead of the fused op; the scale
//   on the product or on q; with or without an added score bias, and after it Swin's shifted-window mask
//   added per window through a view [B/nW, nW, h, N, N]; the pre-softmax scores exported when read outside;
//   Swin V2's cosine attention, q and k (packed qkv or separate) L2-normalised and the scores scaled per
//   head, with the same terms) -> SoftmaxAttention
//   LaViT theta/psi transforms of the previous scores, softmax, ·v -> ReusedAttention
//   LaViT permute, depthwise conv, 1x1 conv, permute, ·gamma of the previous stage's scores ->
//   AttentionResidual SOFT's scaled q, strided-conv landmarks + LayerNorm + GELU, Gaussian kernels, Newton
//   inverse (any number of iterations), (K1·K2inv)·(K1ᵀ·V) + depthwise conv of V -> LinearAttention, as
//   --emit primitive writes it or as torch.onnx.export writes the reference SOFT (linear_attention_pattern)
// The patterns are the tables below; the rewrites check what the tables cannot (consistent head counts,
// scalar scale, conv geometry) and finally that the fused op infers the very shapes the pattern produced.
#include <cmath>

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
bool plain_linear(const Node& n) {
  return std::get<LinearAttrs>(n.attrs).activation == Activation::kNone;
}

// src [B,N,C] -> out [B,h,N,d]: reshape(B,N,h,d).permute(0,2,1,3). `any_target`: the Reshape may write its
// target in any form (an export's reshape(B,-1,h,d) or (b,n,h,-1)), and the rewrite checks the shapes instead
// (heads_of).
Ops split_heads(const std::string& src, const std::string& out, bool any_target = false) {
  return {{out + ".heads", OpType::kReshape, {src}, any_target ? nullptr : reshape_is({0, 0, kAny, kAny})},
          {out, OpType::kTranspose, {out + ".heads"}, perm_is({0, 2, 1, 3})}};
}

// src [B,N,p·C] -> outs[i] [B,h,N,d]: reshape(B,N,p,h,d).permute(2,0,3,1,4).unbind(0)
Ops unbind_heads(const std::string& src, const std::vector<std::string>& outs) {
  const std::string t = src + ".parts";
  Ops ops = {{t + ".heads", OpType::kReshape, {src}, reshape_is({0, 0, int64_t(outs.size()), kAny, kAny})},
             {t, OpType::kTranspose, {t + ".heads"}, perm_is({2, 0, 3, 1, 4})}};
  for (size_t i = 0; i < outs.size(); ++i) {
    const int64_t p = static_cast<int64_t>(i);
    ops.push_back({outs[i] + ".slice", OpType::kSlice, {t}, slice_is(0, p, p + 1)});
    ops.push_back({outs[i], OpType::kReshape, {outs[i] + ".slice"}, reshape_is({-1, kAny, kAny, kAny})});
  }
  return ops;
}

// softmax(scores) @ v, .transpose(1,2).reshape(B,N,C); the root is "out" (its shape checked by heads_of).
Ops softmax_times_v(const std::string& scores, const std::string& v = "v") {
  return {{"probs", OpType::kSoftmax, {scores}, softmax_last},
          {"pv", OpType::kMatMul, {"probs", v}},
          {"merged", OpType::kTranspose, {"pv"}, perm_is({0, 2, 1, 3})},
          {"out", OpType::kReshape, {"merged"}}};
}

// The score terms after q·kᵀ: none, a bias, or a bias and then Swin's window mask.
enum class ScoreTerms { kNone, kBias, kBiasMask };

// Where the scalar scale multiplies: the scores (q·kᵀ)·scale; the heads of q, (q·scale)·kᵀ (torchvision's
// Swin); or q before its head split, (q_src·scale).reshape(...) (fairseq's Linformer export, separate q, k,
// v). kScoresDiv: the scores divided by a scalar, (q·kᵀ) / c with c = √d, in any layout (Hugging Face's
// ViT, DeiT, Swin and PVT v2 attention, mlpen's LRA Linformer; the importer writes a Mul only where c is a
// power of 2, i.e. d = 4^k such as 64), which the fused op multiplies by fl(1/c): a last-bit difference.
// kQHeadsDiv: the heads of q divided by a scalar, (q / c)·kᵀ (nn.MultiheadAttention's export for a head size
// whose √d is not a power of 2, rewritten by the importer; code that scales q so), which the fused op takes
// as the scale on q, fl(1/c): a last-bit difference in each element of q.
enum class ScaleAt { kScores, kQHeads, kQInput, kScoresDiv, kQHeadsDiv };

struct AttentionPattern {
  Pattern pattern;
  AttentionInputs layout;
  ScaleAt scale_at;
  ScoreTerms terms;
  std::string scores;   // the pre-softmax scores' value
  bool kv_shared;       // separate inputs whose values are the keys
  bool kv_heads;        // k and v captured as heads [B,h,Nk,d]: the rewrite merges them into tokens
  bool cosine = false;  // q and k L2-normalised first, the scale per head (cosine_attention_ops)
};

// F.normalize(src, dim=-1) as exported: src / expand(clip(reduce_l2(src, -1, keepdims), eps)) to src's shape
// (the rewrite checks the axis, the clip's bounds and the expanded shape); without the Expand where the Div
// broadcasts by itself.
Ops l2_normalize(const std::string& src, const std::string& out, bool expanded) {
  auto l2_last = [](const Node& n) {
    const auto& a = std::get<ReduceAttrs>(n.attrs);
    return a.kind == ReduceKind::kL2 && a.keepdims && a.axes.size() == 1 &&
           (a.axes[0] == -1 || a.axes[0] == 3);
  };
  auto clip_min = [](const Node& n) {
    const auto& a = std::get<UnaryAttrs>(n.attrs);
    return a.kind == UnaryKind::kClip && std::isfinite(a.alpha) && a.alpha >= 0.0f && a.beta == INFINITY;
  };
  Ops ops = {{out + ".norm", OpType::kReduce, {src}, l2_last},
             {out + ".clamped", OpType::kUnary, {out + ".norm"}, clip_min}};
  if (expanded) ops.push_back({out + ".expanded", OpType::kExpand, {out + ".clamped"}});
  ops.push_back({out, OpType::kDiv, {src, out + (expanded ? ".expanded" : ".clamped")}});
  return ops;
}

// Cosine attention of packed qkv (torchvision's Swin V2; timm's writes the same ops) or of separate q, k, v
// (Hugging Face's Swin V2, its heads split by any Reshape target): normalize(q)·normalize(k)ᵀ times a
// per-head constant exp(clamp(logit_scale)) (folded by the importer), then the score terms.
Ops cosine_attention_ops(AttentionInputs layout, bool expanded) {
  const Ops heads =
      layout == AttentionInputs::kQkvPacked
          ? unbind_heads("qkv", {"q", "k", "v"})
          : split_heads("q_in", "q", true) + split_heads("k_in", "k", true) + split_heads("v_in", "v", true);
  return heads + l2_normalize("q", "q_n", expanded) + l2_normalize("k", "k_n", expanded) +
         Ops{{"k_t", OpType::kTranspose, {"k_n"}, perm_is({0, 1, 3, 2})},
             {"qk", OpType::kMatMul, {"q_n", "k_t"}},
             {"scaled", OpType::kMul, {"qk", "scale"}}};
}

// Appends the score terms after `scores` and softmax(·)·v; returns the pre-softmax scores' value.
std::string add_score_terms(Ops* ops, std::string scores, ScoreTerms terms) {
  if (terms != ScoreTerms::kNone) {
    ops->push_back({"biased", OpType::kAdd, {scores, "bias"}});
    scores = "biased";
  }
  // (s + bias).view(-1, nW, h, N, N) + mask[1, nW, 1, N, N], viewed back as [-1, h, N, N]
  if (terms == ScoreTerms::kBiasMask) {
    *ops = *ops + Ops{{"windows", OpType::kReshape, {"biased"}, reshape_is({-1, kAny, kAny, kAny, kAny})},
                      {"windows_masked", OpType::kAdd, {"windows", "mask"}},
                      {"masked", OpType::kReshape, {"windows_masked"}, reshape_is({-1, kAny, kAny, kAny})}};
    scores = "masked";
  }
  return scores;
}

std::vector<AttentionPattern> softmax_attention_patterns() {
  std::vector<AttentionPattern> out;
  // Separate q, k, v come from exports too (Linformer's compressed k and v, Nk != Nq): any Reshape targets.
  // The importer merges k's head transpose and kᵀ into one Transpose (0,2,3,1) where nothing else reads k
  // (fairseq's export): [B,Nk,h,d] -> [B,h,d,Nk] directly.
  const Ops k_t = {{"k_t", OpType::kTranspose, {"k"}, perm_is({0, 1, 3, 2})}};
  const Ops k_t_direct = {{"k.heads", OpType::kReshape, {"k_in"}},
                          {"k_t", OpType::kTranspose, {"k.heads"}, perm_is({0, 2, 3, 1})}};
  // Values that are the keys (lucidrains' share_kv, exported with one head split for both): v = k.
  // Keys and values that only exist as heads [B,h,Nk,d], captured as they are: mlpen's LRA Linformer
  // compresses each head, E_h·K_h, and lucidrains' one_kv_head expands one key/value head to every head
  // (docs/linear_attention.md, Linformer). The fused op reads k and v as [B,Nk,C] tokens, so the rewrite
  // merges the heads ahead of it (Transpose (0,2,1,3) + Reshape, the inverse of the op's own split).
  struct Layout {
    AttentionInputs layout;
    Ops heads;
    bool kv_shared;
    bool kv_heads;
  };
  const Layout layouts[] = {
      {AttentionInputs::kQkvPacked, unbind_heads("qkv", {"q", "k", "v"}) + k_t, false, false},
      {AttentionInputs::kQKvPacked, split_heads("q_in", "q") + unbind_heads("kv", {"k", "v"}) + k_t, false,
       false},
      {AttentionInputs::kSeparate,
       split_heads("q_in", "q", true) + split_heads("k_in", "k", true) + split_heads("v_in", "v", true) + k_t,
       false, false},
      {AttentionInputs::kSeparate,
       split_heads("q_in", "q", true) + k_t_direct + split_heads("v_in", "v", true), false, false},
      {AttentionInputs::kSeparate, split_heads("q_in", "q", true) + split_heads("k_in", "k", true) + k_t,
       true, false},
      // Also values that are the keys' heads (v = k): the matcher lets k and v bind one tensor, and the
      // rewrite's completion then merges it into tokens once.
      {AttentionInputs::kSeparate, split_heads("q_in", "q", true) + k_t, false, true}};
  for (const auto& [layout, heads, kv_shared, kv_heads] : layouts) {
    for (ScaleAt scale_at :
         {ScaleAt::kScores, ScaleAt::kQHeads, ScaleAt::kQInput, ScaleAt::kScoresDiv, ScaleAt::kQHeadsDiv}) {
      if (scale_at == ScaleAt::kQInput && layout != AttentionInputs::kSeparate) continue;
      for (ScoreTerms terms : {ScoreTerms::kNone, ScoreTerms::kBias, ScoreTerms::kBiasMask}) {
        Ops ops = heads;
        if (scale_at == ScaleAt::kQHeads || scale_at == ScaleAt::kQHeadsDiv)
          ops =
              ops +
              Ops{{"q_scaled", scale_at == ScaleAt::kQHeadsDiv ? OpType::kDiv : OpType::kMul, {"q", "scale"}},
                  {"qk", OpType::kMatMul, {"q_scaled", "k_t"}}};
        else if (scale_at == ScaleAt::kQInput)
          ops = ops + Ops{{"q_in", OpType::kMul, {"q_src", "scale"}}, {"qk", OpType::kMatMul, {"q", "k_t"}}};
        else
          ops =
              ops +
              Ops{{"qk", OpType::kMatMul, {"q", "k_t"}},
                  {"scaled", scale_at == ScaleAt::kScoresDiv ? OpType::kDiv : OpType::kMul, {"qk", "scale"}}};
        const std::string scores = add_score_terms(
            &ops, scale_at == ScaleAt::kScores || scale_at == ScaleAt::kScoresDiv ? "scaled" : "qk", terms);
        out.push_back({{"softmax_attention", ops + softmax_times_v(scores, kv_shared ? "k" : "v"), {scores}},
                       layout,
                       scale_at,
                       terms,
                       scores,
                       kv_shared,
                       kv_heads});
      }
    }
  }
  for (AttentionInputs layout : {AttentionInputs::kQkvPacked, AttentionInputs::kSeparate})
    for (bool expanded : {true, false})
      for (ScoreTerms terms : {ScoreTerms::kNone, ScoreTerms::kBias, ScoreTerms::kBiasMask}) {
        Ops ops = cosine_attention_ops(layout, expanded);
        const std::string scores = add_score_terms(&ops, "scaled", terms);
        out.push_back({{"cosine_attention", ops + softmax_times_v(scores), {scores}},
                       layout,
                       ScaleAt::kScores,
                       terms,
                       scores,
                       false,
                       false,
                       true});
      }
  return out;
}

Pattern reused_attention_pattern() {
  Ops ops = {{"theta", OpType::kLinear, {"prev", "theta_w", "theta_b"}, plain_linear},
             {"theta_t", OpType::kTranspose, {"theta"}, perm_is({0, 1, 3, 2})},
             {"psi", OpType::kLinear, {"theta_t", "psi_w", "psi_b"}, plain_linear},
             {"scores", OpType::kTranspose, {"psi"}, perm_is({0, 1, 3, 2})}};
  return {"reused_attention", ops + split_heads("v_in", "v") + softmax_times_v("scores"), {"scores"}};
}

// `gamma_view`: gamma is a [h2] weight viewed as [h2,1,1] by a Reshape (the .pth route, PyTorch's
// gamma.view(1,h2,1,1)); otherwise a constant [1,h2,1,1] or [h2,1,1] (torch.onnx.export folds the view into
// its initializer).
Pattern attention_residual_pattern(bool gamma_view) {
  auto conv_plain = [](const Node& n) {
    const auto& a = std::get<Conv2dAttrs>(n.attrs);
    return a.pad_h == 0 && a.pad_w == 0 && a.dilation_h == 1 && a.dilation_w == 1 &&
           a.activation == Activation::kNone;
  };
  Pattern p{"attention_residual",
            {{"per_key", OpType::kTranspose, {"scores"}, perm_is({0, 3, 1, 2})},
             {"images", OpType::kReshape, {"per_key"}, reshape_is({-1, kAny, kAny, kAny})},
             {"dw", OpType::kConv2d, {"images", "dw_w", "dw_b"}, conv_plain},
             {"pw", OpType::kConv2d, {"dw", "pw_w", "pw_b"}, conv_plain},
             {"tokens", OpType::kReshape, {"pw"}, reshape_is({-1, kAny, kAny, kAny})},
             {"per_query", OpType::kTranspose, {"tokens"}, perm_is({0, 2, 3, 1})}},
            {}};
  if (gamma_view) {
    p.ops.push_back({"gamma_view", OpType::kReshape, {"gamma"}, reshape_is({kAny, 1, 1})});
    p.ops.push_back({"out", OpType::kMul, {"per_query", "gamma_view"}});
  } else {
    p.ops.push_back({"out", OpType::kMul, {"per_query", "gamma"}});
  }
  return p;
}

bool no_bias_conv(const Node& n) {
  const auto& a = std::get<Conv2dAttrs>(n.attrs);
  return a.dilation_h == 1 && a.dilation_w == 1 && a.activation == Activation::kNone;
}
bool erf_gelu(const Node& n) {
  return std::get<GeluAttrs>(n.attrs).approximation == GeluApproximation::kErf;
}
std::function<bool(const Node&)> reduce_is(int32_t axis, bool keepdims) {
  return [=](const Node& n) {
    const auto& a = std::get<ReduceMeanAttrs>(n.attrs);
    return a.axes == std::vector<int32_t>{axis} && a.keepdims == keepdims;
  };
}

// Either SOFT form (its differences below): what `vitrt-convert --emit primitive` writes
// (arch/primitive_emit.cpp), or what torch.onnx.export writes for tools/reference/vitrt_reference/soft.py
// once the importer has folded the per-channel distance loop (converter/onnx/unrolled_distance.cpp).
enum class SoftForm { kPrimitive, kExported };

// Reduces the last axis of a rank-`rank` input, written -1 or rank − 1.
std::function<bool(const Node&)> reduce_last(int rank, bool keepdims) {
  return [=](const Node& n) {
    const auto& a = std::get<ReduceMeanAttrs>(n.attrs);
    return a.axes.size() == 1 && (a.axes[0] == -1 || a.axes[0] == rank - 1) && a.keepdims == keepdims;
  };
}

// SOFT's LinearAttention with `iterations` Newton steps, in either form. The exported form differs in:
//   q / d^{1/4} (Div) where the primitive form multiplies by d^{-1/4};
//   the landmark image [B·h,H,W,d] reached by two Reshapes ([B·h,N,d] first), the V conv's tokens likewise;
//   exp(−dist / 2) as Mul −1, Mul 0.5 (one pair of constants per kernel) where the primitive has Mul −0.5;
//   α = (1 / max²) · 1.8 from reductions without keepdims, unsqueezed to [B,h,1,1] by two Reshapes, where the
//   primitive has 1.8 / max² from keepdims reductions (the fused kernel computes the former,
//   backends/cpu/ref/newton_inverse.cpp);
//   one constant 2 per Newton step where the primitive shares one.
Pattern linear_attention_pattern(int iterations, SoftForm form) {
  const bool exported = form == SoftForm::kExported;
  Ops ops = split_heads("q_in", "q_heads") + split_heads("v_in", "v");
  if (exported)
    ops = ops + Ops{{"q", OpType::kDiv, {"q_heads", "q_div"}},
                    {"lm.rows", OpType::kReshape, {"q"}, reshape_is({kAny, kAny, kAny})},
                    {"lm.image", OpType::kReshape, {"lm.rows"}, reshape_is({kAny, kAny, kAny, kAny})}};
  else
    ops = ops + Ops{{"q", OpType::kMul, {"q_heads", "q_scale"}},
                    {"lm.image", OpType::kReshape, {"q"}, reshape_is({-1, kAny, kAny, kAny})}};
  // Where the exporter writes 0 or -1 depends on the sizes (with one head, B·h is B and reads 0): the
  // exported form takes any target there and the rewrite checks the shapes instead.
  const int64_t batch_dim = exported ? kAny : -1;
  ops = ops + Ops{// landmarks
                  {"lm.chw", OpType::kTranspose, {"lm.image"}, perm_is({0, 3, 1, 2})},
                  {"lm.conv", OpType::kConv2d, {"lm.chw", "landmark_w", ""}, no_bias_conv},
                  {"lm.flat", OpType::kReshape, {"lm.conv"}, reshape_is({0, 0, -1})},
                  {"lm.tokens", OpType::kTranspose, {"lm.flat"}, perm_is({0, 2, 1})},
                  {"lm.heads", OpType::kReshape, {"lm.tokens"}, reshape_is({batch_dim, kAny, kAny, kAny})},
                  {"lm.norm", OpType::kLayerNorm, {"lm.heads", "ln_gamma", "ln_beta"}},
                  {"lm", OpType::kGelu, {"lm.norm"}, erf_gelu},
                  // Gaussian kernels
                  {"keys", OpType::kReshape, {"lm"}, reshape_is({0, 0, 1, kAny, kAny})}};
  for (const char* k : {"k1", "k2"}) {
    const std::string n = k;
    ops = ops + Ops{{n + ".rows", OpType::kReshape, {n == "k1" ? "q" : "lm"}, reshape_is({0, 0, 0, 1, kAny})},
                    {n + ".diff", OpType::kSub, {n + ".rows", "keys"}},
                    {n + ".square", OpType::kMul, {n + ".diff", n + ".diff"}},
                    {n + ".distance", OpType::kReduceSum, {n + ".square"}, reduce_is(-1, false)}};
    if (exported)
      ops = ops + Ops{{n + ".neg", OpType::kMul, {n + ".distance", n + ".minus_one"}},
                      {n + ".exponent", OpType::kMul, {n + ".neg", n + ".half"}}};
    else
      ops.push_back({n + ".exponent", OpType::kMul, {n + ".distance", "neg_half"}});
    ops.push_back({n, OpType::kExp, {n + ".exponent"}});
  }
  // Newton inverse of K2
  if (exported)
    ops = ops + Ops{{"rowsum", OpType::kReduceSum, {"k2"}, reduce_last(4, false)},
                    {"maxrow", OpType::kReduceMax, {"rowsum"}, reduce_last(3, false)},
                    {"maxrow2", OpType::kMul, {"maxrow", "maxrow"}},
                    {"recip", OpType::kDiv, {"one", "maxrow2"}},
                    {"alpha.bh", OpType::kMul, {"recip", "alpha_num"}},
                    {"alpha.bh1", OpType::kReshape, {"alpha.bh"}},
                    {"alpha", OpType::kReshape, {"alpha.bh1"}}};
  else
    ops = ops + Ops{{"rowsum", OpType::kReduceSum, {"k2"}, reduce_is(-1, true)},
                    {"maxrow", OpType::kReduceMax, {"rowsum"}, reduce_is(-2, true)},
                    {"maxrow2", OpType::kMul, {"maxrow", "maxrow"}},
                    {"alpha", OpType::kDiv, {"alpha_num", "maxrow2"}}};
  ops = ops + Ops{{"p", OpType::kAdd, {"k2", "reg_eye"}}, {"v0", OpType::kMul, {"alpha", "p"}}};
  for (int i = 0; i < iterations; ++i) {
    const std::string v = "v" + std::to_string(i), n = "iter" + std::to_string(i);
    ops = ops + Ops{{n + ".vp", OpType::kMatMul, {v, "p"}},
                    {n + ".vpv", OpType::kMatMul, {n + ".vp", v}},
                    {n + ".2v", OpType::kMul, {v, exported ? n + ".two" : "two"}},
                    {"v" + std::to_string(i + 1), OpType::kSub, {n + ".2v", n + ".vpv"}}};
  }
  const std::string inv = "v" + std::to_string(iterations);
  ops = ops + Ops{{"k3", OpType::kTranspose, {"k1"}, perm_is({0, 1, 3, 2})},
                  {"left", OpType::kMatMul, {"k1", inv}},
                  {"right", OpType::kMatMul, {"k3", "v"}},
                  {"product", OpType::kMatMul, {"left", "right"}},
                  {"vc.grid", OpType::kReshape, {"v"}, reshape_is({0, 0, kAny, kAny, kAny})},
                  {"vc.permute", OpType::kTranspose, {"vc.grid"}, perm_is({0, 4, 1, 2, 3})},
                  {"vc.image", OpType::kReshape, {"vc.permute"}, reshape_is({batch_dim, kAny, kAny, kAny})},
                  {"vc.conv", OpType::kConv2d, {"vc.image", "conv_w", ""}, no_bias_conv}};
  if (exported)
    ops = ops + Ops{{"vc.split", OpType::kReshape, {"vc.conv"}, reshape_is({kAny, kAny, kAny, kAny, kAny})},
                    {"vc.tokens", OpType::kReshape, {"vc.split"}, reshape_is({kAny, kAny, kAny, kAny})}};
  else
    ops.push_back({"vc.tokens", OpType::kReshape, {"vc.conv"}, reshape_is({-1, kAny, kAny, kAny})});
  ops = ops + Ops{{"vc", OpType::kTranspose, {"vc.tokens"}, perm_is({0, 2, 3, 1})},
                  {"sum", OpType::kAdd, {"product", "vc"}},
                  {"merged", OpType::kTranspose, {"sum"}, perm_is({0, 2, 1, 3})},
                  {"out", OpType::kReshape, {"merged"}, reshape_is({0, 0, kAny})}};
  return {"linear_attention", ops, {}};
}

// The Newton steps feeding a SOFT-shaped root, counted along V <- Sub(Mul(V, 2), MatMul(MatMul(V, P), V)); -1
// when the root does not lead to one. Only picks which pattern to try: the pattern itself checks everything.
int newton_steps(const Graph& g, const GraphIndex& index, size_t root) {
  auto producer = [&](int32_t t, OpType type) -> const Node* {
    if (t == kAbsent || index.producer[t] < 0) return nullptr;
    const Node& n = g.nodes[index.producer[t]];
    return n.type == type ? &n : nullptr;
  };
  const Node* n = producer(g.nodes[root].inputs[0], OpType::kTranspose);
  n = n ? producer(n->inputs[0], OpType::kAdd) : nullptr;
  n = n ? producer(n->inputs[0], OpType::kMatMul) : nullptr;  // product
  n = n ? producer(n->inputs[0], OpType::kMatMul) : nullptr;  // K1 @ K2inv
  if (!n) return -1;
  int steps = 0;
  for (const Node* v = producer(n->inputs[1], OpType::kSub); v && steps < 10000; ++steps) {
    const Node* twice = producer(v->inputs[0], OpType::kMul);
    if (!twice || twice->inputs.size() != 2) return -1;
    const Node* prev = producer(twice->inputs[0], OpType::kSub);
    v = prev ? prev : producer(twice->inputs[1], OpType::kSub);
  }
  return steps;
}

const std::vector<int64_t>& reshape_of(const Graph& g, const Match& m, const std::string& value) {
  return std::get<ReshapeAttrs>(m.node(g, value).attrs).shape;
}

// Heads and head size from the shapes every head-splitting Reshape of the match produces (not from their
// targets, which may write 0 or -1 anywhere): a split `*.heads` keeps B and N and cuts the channels
// head-major, [B,N,h·d] -> [B,N,h,d] (unbind: [B,N,p·h·d] -> [B,N,p,h,d]); an unbound part is [1,B,h,N,d] ->
// [B,h,N,d]; the merge "out" is [B,N,h,d] -> [B,N,h·d]. False when any disagrees or is another reshape.
bool heads_of(const Graph& g, const Match& m, int64_t* h, int64_t* d) {
  *h = *d = -1;
  auto agree = [](int64_t* slot, int64_t v) {
    if (*slot < 0) *slot = v;
    return *slot == v && v > 0;
  };
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& kv : m.nodes) {
    const Node& n = g.nodes[kv.second];
    // The window mask's views split the batch, not the channels (window_mask_of checks them).
    if (n.type != OpType::kReshape || kv.first == "out" || kv.first == "windows" || kv.first == "masked")
      continue;
    const Shape& in = g.tensors[n.inputs[0]].shape;
    const Shape& o = g.tensors[n.outputs[0]].shape;
    bool ok = false;
    if (ends_with(kv.first, ".heads") && in.rank == 3 && o.rank == 4)
      ok = o[0] == in[0] && o[1] == in[1] && agree(h, o[2]) && agree(d, o[3]) && o[2] * o[3] == in[2];
    else if (ends_with(kv.first, ".heads") && in.rank == 3 && o.rank == 5)
      ok = o[0] == in[0] && o[1] == in[1] && o[2] > 0 && agree(h, o[3]) && agree(d, o[4]) &&
           o[2] * o[3] * o[4] == in[2];
    else if (in.rank == 5 && o.rank == 4)
      ok = in[0] == 1 && o == Shape{in[1], in[2], in[3], in[4]} && agree(h, o[1]) && agree(d, o[3]);
    if (!ok) return false;
  }
  const Shape& merged = g.tensors[m.tensor("merged")].shape;
  const Shape& out = g.tensors[m.tensor("out")].shape;
  return *h > 0 && merged.rank == 4 && out.rank == 3 && out[0] == merged[0] && out[1] == merged[1] &&
         merged[2] == *h && merged[3] == *d && out[2] == *h * *d;
}

// The batch axis at 1 (static checks only), or at `batch`.
Shape at_batch1(Shape s, int64_t batch = 1) {
  for (int i = 0; i < s.rank; ++i)
    if (s[i] == kDynamicDim) s[i] = batch;
  return s;
}

// The fused node must infer exactly the shapes the matched ops produce, with the dynamic batch at `batch`
// (Swin's windowed attention has B·nW, a multiple of its mask's nW, where the image batch has B).
bool same_shapes(const Graph& g, const Node& fused, int64_t batch = 1) {
  Shape in[kMaxOpInputs];
  const Shape* src[kMaxOpInputs] = {};
  for (size_t i = 0; i < fused.inputs.size(); ++i) {
    if (fused.inputs[i] == kAbsent) continue;
    in[i] = at_batch1(g.tensors[fused.inputs[i]].shape, batch);
    src[i] = &in[i];
  }
  Shape dst[kMaxOpOutputs];
  if (!infer_node_shapes(fused, src, static_cast<int>(fused.inputs.size()), dst).ok()) return false;
  for (size_t o = 0; o < fused.outputs.size(); ++o)
    if (dst[o] != at_batch1(g.tensors[fused.outputs[o]].shape, batch)) return false;
  return true;
}

bool scalar_constant(const Graph& g, int32_t t, float* v) {
  const Tensor& c = g.tensors[t];
  if (!c.is_constant || c.dtype != DType::kFloat32 || c.shape.numel() != 1 || c.constant.size < sizeof(float))
    return false;
  *v = *c.f32();
  return true;
}

// Adds the exported scores as the fused op's second output when anything outside reads them.
void add_scores_output(const Graph& g, const GraphIndex& index, const Match& m, const std::string& scores,
                       Node* fused) {
  const int32_t t = m.tensor(scores);
  int inside = 0;
  for (const auto& kv : m.nodes)
    for (int32_t in : g.nodes[kv.second].inputs) inside += in == t;
  if (index.consumers[t] > inside || is_graph_output(g, t)) fused->outputs.push_back(t);
}

// Swin's window mask (the kBiasMask patterns): s [Bw,h,N,Nk] viewed as [Bw/nW, nW, h, N, Nk] (the -1 first),
// plus a constant mask [1,nW,1,N,Nk] (or without its leading 1) that enlarges nothing, viewed back as
// [Bw,h,N,Nk]. Sets the window count, or returns false.
bool window_mask_of(const Graph& g, const Match& m, int64_t* windows) {
  const Shape& s = g.tensors[m.tensor("biased")].shape;
  const Shape& w = g.tensors[m.tensor("windows")].shape;
  const Tensor& mask = g.tensors[m.tensor("mask")];
  if (s.rank != 4 || w.rank != 5 || reshape_of(g, m, "windows")[0] != -1 ||
      reshape_of(g, m, "masked")[0] != -1)
    return false;
  for (int i = 1; i < 5; ++i)
    if (w[i] == kDynamicDim || w[i] < 1 || (i > 1 && w[i] != s[i - 1])) return false;
  // The batch: dynamic in both, or a static one that the windows divide.
  if ((s[0] == kDynamicDim) != (w[0] == kDynamicDim) || (s[0] != kDynamicDim && w[0] * w[1] != s[0]))
    return false;
  if (g.tensors[m.tensor("windows_masked")].shape != w || g.tensors[m.tensor("masked")].shape != s)
    return false;
  const Shape want{1, w[1], 1, w[3], w[4]};
  Shape ms = mask.shape;
  if (ms.rank == 4) ms = Shape{1, ms[0], ms[1], ms[2], ms[3]};
  if (!mask.is_constant || mask.dtype != DType::kFloat32 || ms != want ||
      mask.constant.size < sizeof(float) * static_cast<size_t>(want.numel()))
    return false;
  *windows = w[1];
  return true;
}

// A [nW,N,Nk] view of the window mask constant [1,nW,1,N,Nk]: the same bytes under another shape.
int32_t add_mask_view(Graph& g, int32_t constant, int64_t windows) {
  Tensor v = g.tensors[constant];
  v.name += ".windows";
  v.shape = Shape{windows, v.shape[v.shape.rank - 2], v.shape[v.shape.rank - 1]};
  return g.add_tensor(std::move(v));
}

// kv_heads patterns: k and v (the same tensor when shared) must be heads [B,h,Nk,d] with q's batch axis, h
// and d, and one static Nk >= 1, so that their merge is [B,Nk,h·d] tokens the fused op splits back exactly.
bool kv_heads_fit(const Graph& g, const Match& m, const AttentionPattern& ap, int64_t h, int64_t d) {
  const Shape& q = g.tensors[m.tensor("q")].shape;  // [B,h,N,d]
  const Shape& k = g.tensors[m.tensor("k")].shape;
  const Shape& v = g.tensors[m.tensor(ap.kv_shared ? "k" : "v")].shape;
  return q.rank == 4 && k.rank == 4 && k[0] == q[0] && k[1] == h && k[2] != kDynamicDim && k[2] >= 1 &&
         k[3] == d && v == k;
}

// The scale as the fused op multiplies it: the scalar factor, or fl(1/c) for a division by a scalar c.
bool attention_scale_of(const Graph& g, const Match& m, ScaleAt at, float* scale) {
  if (at != ScaleAt::kScoresDiv && at != ScaleAt::kQHeadsDiv)
    return scalar_constant(g, m.tensor("scale"), scale);
  float c;
  if (!scalar_constant(g, m.tensor("scale"), &c) || !std::isfinite(c) || c == 0) return false;
  *scale = 1.0f / c;
  return std::isnormal(*scale);  // a subnormal 1/c (|c| > 2^126) would lose more than the last bit
}

// Cosine attention's terms (cosine_attention_ops) as the fused op takes them: one clip bound for q and k (the
// eps), each normalised value of its input's shape (an Expand back to it, a Div that broadcasts nothing into
// it), and the factor a scalar or one value per head ([h,1,1] or [1,h,1,1]).
bool cosine_terms_of(const Graph& g, const Match& m, int64_t h, SoftmaxAttentionAttrs* a) {
  const float eps = std::get<UnaryAttrs>(m.node(g, "q_n.clamped").attrs).alpha;
  if (std::get<UnaryAttrs>(m.node(g, "k_n.clamped").attrs).alpha != eps) return false;
  for (const std::string x : {"q", "k"}) {
    const Shape& src = g.tensors[m.tensor(x)].shape;
    if (g.tensors[m.tensor(x + "_n")].shape != src ||
        (m.nodes.count(x + "_n.expanded") && g.tensors[m.tensor(x + "_n.expanded")].shape != src))
      return false;
  }
  const Tensor& c = g.tensors[m.tensor("scale")];
  const int64_t n = c.shape.numel();
  if (!c.is_constant || c.dtype != DType::kFloat32 || n < 1 ||
      c.constant.size < sizeof(float) * static_cast<size_t>(n))
    return false;
  if (n == 1) {
    a->scale = *c.f32();
  } else {
    const Shape per_head =
        c.shape.rank == 4 && c.shape[0] == 1 ? Shape{c.shape[1], c.shape[2], c.shape[3]} : c.shape;
    if (per_head != Shape{h, 1, 1}) return false;
    a->head_scales.assign(c.f32(), c.f32() + h);  // non-finite ones: the op's shape inference refuses them
  }
  a->qk_norm = true;
  a->qk_norm_eps = eps;
  return true;
}

bool rewrite_softmax_attention(const Graph& g, const GraphIndex& index, const Match& m,
                               const AttentionPattern& ap, Node* fused, int64_t* windows) {
  int64_t h, d;
  SoftmaxAttentionAttrs a;
  if (!heads_of(g, m, &h, &d)) return false;
  if (ap.cosine ? !cosine_terms_of(g, m, h, &a) : !attention_scale_of(g, m, ap.scale_at, &a.scale))
    return false;
  if (ap.kv_heads && !kv_heads_fit(g, m, ap, h, d)) return false;
  if (ap.terms == ScoreTerms::kBiasMask && !window_mask_of(g, m, windows)) return false;
  a.num_heads = static_cast<int32_t>(h);
  a.inputs = ap.layout;
  a.scale_on_q = ap.scale_at == ScaleAt::kQHeads || ap.scale_at == ScaleAt::kQInput ||
                 ap.scale_at == ScaleAt::kQHeadsDiv;
  fused->type = OpType::kSoftmaxAttention;
  fused->attrs = a;
  switch (ap.layout) {
    case AttentionInputs::kQkvPacked:
      fused->inputs = {m.tensor("qkv")};
      break;
    case AttentionInputs::kQKvPacked:
      fused->inputs = {m.tensor("q_in"), m.tensor("kv")};
      break;
    case AttentionInputs::kSeparate:
      // kv_heads: k and v are still heads here; the pass's completion merges them into tokens.
      fused->inputs = {m.tensor(ap.scale_at == ScaleAt::kQInput ? "q_src" : "q_in"),
                       m.tensor(ap.kv_heads ? "k" : "k_in"),
                       m.tensor(ap.kv_heads ? (ap.kv_shared ? "k" : "v") : (ap.kv_shared ? "k_in" : "v_in"))};
      break;
  }
  if (ap.terms != ScoreTerms::kNone) fused->inputs.push_back(m.tensor("bias"));
  if (ap.terms == ScoreTerms::kBiasMask) fused->inputs.push_back(m.tensor("mask"));  // viewed by the pass
  fused->outputs = {m.tensor("out")};
  add_scores_output(g, index, m, ap.scores, fused);
  return true;
}

bool rewrite_reused_attention(const Graph& g, const GraphIndex& index, const Match& m, Node* fused) {
  int64_t h, d;
  if (!heads_of(g, m, &h, &d)) return false;
  fused->type = OpType::kReusedAttention;
  fused->attrs = ReusedAttentionAttrs{static_cast<int32_t>(h)};
  fused->inputs = {m.tensor("prev"),    m.tensor("v_in"),  m.tensor("theta_w"),
                   m.tensor("theta_b"), m.tensor("psi_w"), m.tensor("psi_b")};
  fused->outputs = {m.tensor("out")};
  add_scores_output(g, index, m, "scores", fused);
  return true;
}

bool rewrite_attention_residual(const Graph& g, const Match& m, Node* fused) {
  const auto& images = reshape_of(g, m, "images");  // (-1, h1, H, W)
  const auto& dw = std::get<Conv2dAttrs>(m.node(g, "dw").attrs);
  const auto& pw = std::get<Conv2dAttrs>(m.node(g, "pw").attrs);
  const Shape& dww = g.tensors[m.tensor("dw_w")].shape;
  const Shape& pww = g.tensors[m.tensor("pw_w")].shape;
  if (dww.rank != 4 || pww.rank != 4 || dw.groups != images[1] || dw.stride_h != dww[2] ||
      dw.stride_w != dww[3] || dww[2] != dww[3] || pww[2] != 1 || pww[3] != 1 || pw.groups != 1 ||
      pw.stride_h != 1 || pw.stride_w != 1)
    return false;
  // Without the view, gamma must be a constant that scales each head: h2 values along the head axis.
  const Tensor& gamma = g.tensors[m.tensor("gamma")];
  if (!m.nodes.count("gamma_view") &&
      (!gamma.is_constant || gamma.dtype != DType::kFloat32 || gamma.shape.numel() != pww[0] ||
       !(gamma.shape == Shape{1, pww[0], 1, 1} || gamma.shape == Shape{pww[0], 1, 1})))
    return false;
  fused->type = OpType::kAttentionResidual;
  fused->attrs = AttentionResidualAttrs{static_cast<int32_t>(images[2]), static_cast<int32_t>(images[3])};
  fused->inputs = {m.tensor("scores"), m.tensor("dw_w"), m.tensor("dw_b"),
                   m.tensor("pw_w"),   m.tensor("pw_b"), m.tensor("gamma")};
  fused->outputs = {m.tensor("out")};
  return true;
}

bool scalar_is(const Graph& g, int32_t t, float want) {
  float v;
  return scalar_constant(g, t, &v) && v == want;
}

bool shape_is(const Graph& g, const Match& m, const std::string& value, const Shape& want) {
  return at_batch1(g.tensors[m.tensor(value)].shape) == want;
}

// The constants only the exported form has (linear_attention_pattern): each must be the formula's.
bool exported_constants(const Graph& g, const Match& m, int iterations) {
  for (const char* k : {"k1", "k2"})
    if (!scalar_is(g, m.tensor(std::string(k) + ".minus_one"), -1.0f) ||
        !scalar_is(g, m.tensor(std::string(k) + ".half"), 0.5f))
      return false;
  for (int i = 0; i < iterations; ++i)
    if (!scalar_is(g, m.tensor("iter" + std::to_string(i) + ".two"), 2.0f)) return false;
  return scalar_is(g, m.tensor("one"), 1.0f);
}

// q's scale: the primitive form's factor, or the exported form's divisor as its float32 reciprocal. q / c and
// q · fl(1/c) can differ in the last bit (docs/onnx.md, Exported reference models): the fused op multiplies.
bool q_scale_of(const Graph& g, const Match& m, SoftForm form, float* scale) {
  if (form == SoftForm::kPrimitive) return scalar_constant(g, m.tensor("q_scale"), scale);
  float c;
  if (!scalar_constant(g, m.tensor("q_div"), &c) || !std::isfinite(c) || !(c > 0)) return false;
  *scale = 1.0f / c;
  return std::isfinite(*scale) && *scale > 0;
}

bool rewrite_linear_attention(const Graph& g, const Match& m, int iterations, SoftForm form, Node* fused) {
  // Sizes from the shapes the ops produce (batch 1), not from reshape targets (which may write 0 or -1).
  const Shape qh = at_batch1(g.tensors[m.tensor("q_heads.heads")].shape);  // [1,N,h,d]
  const Shape image = at_batch1(g.tensors[m.tensor("lm.image")].shape);    // [h,H,W,d]
  const auto& lc = std::get<Conv2dAttrs>(m.node(g, "lm.conv").attrs);
  const auto& vc = std::get<Conv2dAttrs>(m.node(g, "vc.conv").attrs);
  const Shape& lw = g.tensors[m.tensor("landmark_w")].shape;
  const Shape& cw = g.tensors[m.tensor("conv_w")].shape;
  const Tensor& eye = g.tensors[m.tensor("reg_eye")];
  if (qh.rank != 4 || image.rank != 4) return false;
  const int64_t n = qh[1], h = qh[2], d = qh[3];
  LinearAttentionAttrs a;
  const Shape lm_heads = at_batch1(g.tensors[m.tensor("lm.heads")].shape);  // [1,h,m,d]
  if (!shape_is(g, m, "v.heads", qh) || image[3] != d || image[1] * image[2] != n ||
      !shape_is(g, m, "vc.tokens", Shape{1, d, h, n}) || lm_heads.rank != 4 || lm_heads[1] != h ||
      lm_heads[3] != d || !shape_is(g, m, "vc.image", Shape{1, h, image[1], image[2]}) || lw.rank != 4 ||
      cw.rank != 4 || lw[2] != lw[3] || lc.stride_h != lw[2] || lc.stride_w != lw[3] || lc.pad_h != 0 ||
      lc.pad_w != 0 || lc.groups != 1 || vc.groups != h || vc.stride_h != 1 || vc.stride_w != 1 ||
      cw[2] != cw[3] || vc.pad_h != cw[2] / 2 || vc.pad_w != cw[3] / 2 ||
      !q_scale_of(g, m, form, &a.q_scale) || !scalar_is(g, m.tensor("alpha_num"), 0.9f * 2.0f) ||
      !eye.is_constant || eye.dtype != DType::kFloat32 || eye.shape.rank != 2 ||
      eye.shape[0] != eye.shape[1] ||
      eye.constant.size != sizeof(float) * static_cast<size_t>(eye.shape.numel()))
    return false;
  if (form == SoftForm::kPrimitive &&
      (!scalar_is(g, m.tensor("neg_half"), -0.5f) || !scalar_is(g, m.tensor("two"), 2.0f)))
    return false;
  // Exported: α [B,h] must become [B,h,1,1] (one step size per matrix), whatever the two Reshapes wrote.
  if (form == SoftForm::kExported &&
      (!exported_constants(g, m, iterations) || !shape_is(g, m, "alpha", Shape{1, h, 1, 1})))
    return false;
  // The regulariser: a constant multiple of the identity.
  const int64_t lm = eye.shape[0];
  a.newton_regularizer = eye.f32()[0];
  for (int64_t i = 0; i < lm; ++i)
    for (int64_t j = 0; j < lm; ++j)
      if (eye.f32()[i * lm + j] != (i == j ? a.newton_regularizer : 0.0f)) return false;
  a.num_heads = static_cast<int32_t>(h);
  a.height = static_cast<int32_t>(image[1]);
  a.width = static_cast<int32_t>(image[2]);
  a.landmark_ratio = lc.stride_h;
  a.landmark_ln_eps = std::get<LayerNormAttrs>(m.node(g, "lm.norm").attrs).eps;
  a.pinv = PseudoInverse::kNewtonScaled;
  a.newton_iterations = iterations;
  fused->type = OpType::kLinearAttention;
  fused->attrs = a;
  fused->inputs = {m.tensor("q_in"),     m.tensor("v_in"),    m.tensor("landmark_w"),
                   m.tensor("ln_gamma"), m.tensor("ln_beta"), m.tensor("conv_w")};
  fused->outputs = {m.tensor("out")};
  return true;
}

// A [n] view of a constant of n values ([1,n,1,1] or [n,1,1]): the same bytes under another shape.
int32_t add_vector_view(Graph& g, int32_t constant) {
  Tensor v = g.tensors[constant];
  v.name += ".vector";
  v.shape = Shape{v.shape.numel()};
  return g.add_tensor(std::move(v));
}

// Heads [B,h,Nk,d] -> tokens [B,Nk,h·d]: Transpose (0,2,1,3) then Reshape, appended to *nodes; returns the
// tokens tensor. The inverse of SoftmaxAttention's own head split of its k and v inputs.
int32_t merge_heads(Graph& g, int32_t heads, const std::string& name, std::vector<Node>* nodes) {
  const Shape s = g.tensors[heads].shape;
  Node perm;
  perm.type = OpType::kTranspose;
  perm.attrs = TransposeAttrs{{0, 2, 1, 3}};
  perm.inputs = {heads};
  perm.name = name + ".per_token";
  perm.outputs = {g.add_activation(perm.name, Shape{s[0], s[2], s[1], s[3]})};
  Node merge;
  merge.type = OpType::kReshape;
  merge.attrs = ReshapeAttrs{{0, s[2], s[1] * s[3]}};
  merge.inputs = {perm.outputs[0]};
  merge.name = name;
  merge.outputs = {g.add_activation(name, Shape{s[0], s[2], s[1] * s[3]})};
  const int32_t tokens = merge.outputs[0];
  nodes->push_back(std::move(perm));
  nodes->push_back(std::move(merge));
  return tokens;
}

class FuseAttentionPass final : public Pass {
 public:
  const char* name() const override { return "fuse_attention"; }
  const char* description() const override {
    return "plain-op softmax / LaViT reused attention and attention residual -> the fused ops";
  }

  Status run(Graph& g, const PassContext& ctx, bool* modified) override {
    int64_t windows = 0;    // the last match's Swin window count (its window mask), 0 without one
    bool kv_heads = false;  // the last match read k and v as heads (a kv_heads pattern)
    const auto fuse = [&](const GraphIndex& index, size_t root, Match* m, Node* fused) {
      windows = 0;
      kv_heads = false;
      return try_all(g, index, root, m, fused, &windows, &kv_heads);
    };
    // The fused ops read some constants under another shape: views added here (removed on rejection); heads
    // of k and v are merged into tokens by nodes ahead of the fused op.
    const auto complete = [&](Graph& graph, Node* fused, std::vector<Node>* before) {
      if (fused->type == OpType::kAttentionResidual && graph.tensors[fused->inputs[5]].shape.rank != 1)
        fused->inputs[5] = add_vector_view(graph, fused->inputs[5]);
      if (windows > 0) fused->inputs.back() = add_mask_view(graph, fused->inputs.back(), windows);
      if (kv_heads) {
        const bool shared = fused->inputs[1] == fused->inputs[2];
        fused->inputs[1] = merge_heads(graph, fused->inputs[1], fused->name + ".k_tokens", before);
        fused->inputs[2] = shared ? fused->inputs[1]
                                  : merge_heads(graph, fused->inputs[2], fused->name + ".v_tokens", before);
      }
      return same_shapes(graph, *fused, windows > 0 ? windows : 1);
    };
    if (fuse_at_roots(
            g, ctx, [](const Node&) { return true; }, fuse, complete))
      *modified = true;
    return Status::Ok();
  }

 private:
  bool try_all(const Graph& g, const GraphIndex& index, size_t i, Match* m, Node* fused, int64_t* windows,
               bool* kv_heads) const {
    const OpType t = g.nodes[i].type;
    if (t == OpType::kReshape) {
      for (const auto& ap : softmax_patterns_)
        if (match_pattern(g, index, ap.pattern, i, m) &&
            rewrite_softmax_attention(g, index, *m, ap, fused, windows)) {
          *kv_heads = ap.kv_heads;
          return true;
        }
      if (match_pattern(g, index, reused_, i, m) && rewrite_reused_attention(g, index, *m, fused))
        return true;
      const int steps = newton_steps(g, index, i);
      if (steps < 0) return false;
      for (SoftForm form : {SoftForm::kPrimitive, SoftForm::kExported}) {
        auto it = linear_.find({steps, form});
        if (it == linear_.end())
          it = linear_.emplace(std::make_pair(steps, form), linear_attention_pattern(steps, form)).first;
        if (match_pattern(g, index, it->second, i, m) && rewrite_linear_attention(g, *m, steps, form, fused))
          return true;
      }
      return false;
    }
    if (t == OpType::kMul)
      for (const Pattern& p : residual_)
        if (match_pattern(g, index, p, i, m) && rewrite_attention_residual(g, *m, fused)) return true;
    return false;
  }

  const std::vector<AttentionPattern> softmax_patterns_ = softmax_attention_patterns();
  const Pattern reused_ = reused_attention_pattern();
  const Pattern residual_[2] = {attention_residual_pattern(true), attention_residual_pattern(false)};
  mutable std::map<std::pair<int, SoftForm>, Pattern> linear_;  // by Newton steps and form, built on use
};

}  // namespace

std::unique_ptr<Pass> create_fuse_attention_pass() {
  return std::make_unique<FuseAttentionPass>();
}

}  // namespace vitrt
