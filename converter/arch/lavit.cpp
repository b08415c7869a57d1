// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LaViT as pinned by docs/models.md §4.2: PVT v2 (§6.2: overlapping patch embeddings, spatial-reduction
// attention, MLP with a 3x3 depthwise conv, a LayerNorm after each stage, mean-pooled head) whose attention
// layers are either Vanilla-Attention (VA, `attn.q` present) or Less-Attention (LA, `attn.theta` present).
//
//  * VA: SoftmaxAttention (q, kv) whose second output is the final pre-softmax scores S [B,h,N,N']. Layer 0
//  of
//    stages >= 2 adds a score bias: AttentionResidual(S_last of the previous stage) with attn_res{s}.*.
//  * LA: v = attn.v(xr) and ReusedAttention(S_prev, v, Θ, Ψ), which outputs the new scores when needed.
// A layer exports its scores only when a later LA layer of its stage or the next stage's residual reads them.
// Score tensors are ordinary graph edges: the executor's liveness keeps each alive until its last reader.
#include <cmath>

#include "arch/arch.h"
#include "arch/blocks.h"
#include "arch/pvt_blocks.h"

namespace vitrt::convert {
namespace {

constexpr int kStages = 4;
constexpr int kHeadDim = 64;        // h = C/64 in every stage
constexpr int kResidualKernel = 2;  // attn_res{s}.dw: kernel = stride = 2

enum class LayerKind { kVanilla, kLess };

int count_blocks(const Checkpoint& ckpt, int stage) {
  int n = 0;
  const std::string p = "block" + std::to_string(stage) + ".";
  while (ckpt.tensors.count(p + std::to_string(n) + ".norm1.weight")) ++n;
  return n;
}

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// The input side a LaViT checkpoint was built for, from a Ψ of n x n in `stage` (stage grid = side/2^(s+1)).
int64_t side_for_psi(int64_t n, int stage) {
  const int64_t g = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
  return g * g == n ? g * (int64_t{1} << (stage + 1)) : 0;
}

}  // namespace

Status build_lavit(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info) {
  std::vector<int> heads_override;
  if (!opt.heads.empty()) {
    VITRT_RETURN_IF_ERROR(parse_heads_override(opt.heads, &heads_override));
    if (heads_override.size() != static_cast<size_t>(kStages))
      return invalid_argument("--heads: LaViT takes 4 head counts");
  }
  const auto pe1 = b.shape_of("patch_embed1.proj.weight");
  const auto head = b.shape_of("head.weight");
  if (pe1.size() != 4 || head.size() != 2)
    return bad_input(
        "LaViT: patch_embed1.proj.weight and head.weight are required to read the model's sizes");
  const int64_t in_ch = pe1[1];
  const int img = opt.image_size ? opt.image_size : 224;
  if (img <= 0 || img % 32 != 0)
    return invalid_argument(
        "LaViT: the input side must be a multiple of 32 (every stage grid even, the same N' "
        "in every stage), got " +
        std::to_string(img));

  // Read the layer kinds and check the Θ/Ψ sizes against this input size before building anything, so that a
  // model built for another resolution gets one clear message.
  std::vector<std::vector<LayerKind>> kinds(kStages);
  std::vector<int> stage_heads(kStages);
  std::vector<int64_t> dims(kStages);
  std::vector<std::string> size_errors;
  int64_t built_for = 0;
  const int64_t nk = static_cast<int64_t>(img / 32) * (img / 32);
  for (int s = 1; s <= kStages; ++s) {
    const std::string ps = std::to_string(s);
    const auto pw = b.shape_of("patch_embed" + ps + ".proj.weight");
    if (pw.size() != 4) return bad_input("LaViT: missing patch_embed" + ps + ".proj.weight");
    const int64_t c = dims[s - 1] = pw[0];
    if (!heads_override.empty()) {
      stage_heads[s - 1] = heads_override[s - 1];
    } else {
      if (c % kHeadDim != 0)
        return bad_input("LaViT: stage " + ps + " width " + std::to_string(c) +
                         " is not a multiple of the head dim 64 (pass --heads)");
      stage_heads[s - 1] = static_cast<int>(c / kHeadDim);
    }
    if (c % stage_heads[s - 1] != 0)
      return bad_input("LaViT: stage " + ps + " width " + std::to_string(c) + " does not split into " +
                       std::to_string(stage_heads[s - 1]) + " heads");
    const int depth = count_blocks(ckpt, s);
    if (depth == 0)
      return bad_input("LaViT: stage " + ps + " has no blocks (block" + ps + ".0.norm1.weight)");
    const int64_t side = img >> (s + 1);  // stage grid: img/4, /8, /16, /32
    const int64_t n = side * side;
    for (int i = 0; i < depth; ++i) {
      const std::string p = "block" + ps + "." + std::to_string(i);
      const bool va = b.has(p + ".attn.q.weight"), la = b.has(p + ".attn.theta.weight");
      if (va == la)
        return bad_input("LaViT: " + p + " has " +
                         (va ? "both attn.q and attn.theta" : "neither attn.q nor attn.theta") +
                         " (a layer is Vanilla-Attention with attn.q or Less-Attention with attn.theta)");
      if (la && i == 0)
        return bad_input("LaViT: " + p +
                         " is a Less-Attention layer but has no previous layer in its stage to "
                         "take scores from");
      kinds[s - 1].push_back(va ? LayerKind::kVanilla : LayerKind::kLess);
      if (!la) continue;
      const auto th = b.shape_of(p + ".attn.theta.weight"), psi = b.shape_of(p + ".attn.psi.weight");
      if (!th.empty() && th != std::vector<int64_t>{nk, nk})
        size_errors.push_back("'" + p + ".attn.theta.weight' (theta) is " + dims_str(th) + ", expected " +
                              dims_str({nk, nk}) + " (N' = " + std::to_string(nk) + " key tokens)");
      if (!psi.empty() && psi != std::vector<int64_t>{n, n}) {
        size_errors.push_back("'" + p + ".attn.psi.weight' (psi) is " + dims_str(psi) + ", expected " +
                              dims_str({n, n}) + " (N = " + std::to_string(n) + " query tokens in stage " +
                              ps + ")");
        if (psi.size() == 2 && psi[0] == psi[1] && !built_for) built_for = side_for_psi(psi[0], s);
      }
    }
  }
  if (!size_errors.empty()) {
    std::string m = "LaViT: the Less-Attention weights do not fit a " + std::to_string(img) + "x" +
                    std::to_string(img) + " input: the model was built for another input size";
    if (built_for > 0)
      m += " (" + std::to_string(built_for) + "x" + std::to_string(built_for) + ", by its psi)";
    m += "; Ψ/Θ are tied to the token counts, so convert at that size (--image-size):";
    for (size_t i = 0; i < size_errors.size() && i < 8; ++i) m += "\n  " + size_errors[i];
    if (size_errors.size() > 8) m += "\n  ... and " + std::to_string(size_errors.size() - 8) + " more";
    return bad_input(m);
  }

  int32_t x = b.input("image", Shape{1, in_ch, img, img});
  int64_t prev_c = in_ch, h = img, w = img, prev_h = 0, prev_w = 0;
  int32_t prev_stage_scores = -1;  // S_last of the previous stage
  std::string dims_desc, depth_desc, va_desc, la_desc, heads_desc;
  int64_t c = 0;
  for (int s = 1; s <= kStages; ++s) {
    const std::string ps = std::to_string(s);
    c = dims[s - 1];
    x = pvt_patch_embed(b, x, s, prev_c, c, &h, &w);
    const int nh = stage_heads[s - 1];
    const float scale = 1.0f / std::sqrt(static_cast<float>(c / nh));

    // The attention residual from the previous stage's last scores: the bias of this stage's first VA layer.
    int32_t residual = -1;
    if (s >= 2) {
      const std::string pr = "attn_res" + ps;
      const int64_t h1 = stage_heads[s - 2];
      residual =
          b.op(OpType::kAttentionResidual,
               AttentionResidualAttrs{static_cast<int32_t>(prev_h), static_cast<int32_t>(prev_w)},
               {prev_stage_scores, b.weight(pr + ".dw.weight", {h1, 1, kResidualKernel, kResidualKernel}),
                b.weight(pr + ".dw.bias", {h1}), b.weight(pr + ".pw.weight", {nh, h1, 1, 1}),
                b.weight(pr + ".pw.bias", {nh}), b.weight(pr + ".gamma", {nh})},
               pr);
    }

    const auto& kind = kinds[s - 1];
    const int depth = static_cast<int>(kind.size());
    int32_t scores = -1;  // S of the previous layer of this stage
    int n_va = 0, n_la = 0;
    for (int i = 0; i < depth; ++i) {
      const std::string p = "block" + ps + "." + std::to_string(i);
      const bool last = i + 1 == depth;
      const bool export_scores = last ? s < kStages : kind[i + 1] == LayerKind::kLess;
      std::vector<std::string> outs = {p + ".attn"};
      if (export_scores) outs.push_back(p + ".attn.scores");
      int32_t y = layer_norm(b, x, p + ".norm1", c, kPvtBlockLnEps);
      std::vector<int32_t> res;
      if (kind[i] == LayerKind::kVanilla) {
        ++n_va;
        const int32_t q = linear(b, y, p + ".attn.q", c, c);
        const int32_t kv = linear(b, pvt_reduced_tokens(b, y, p, c, h, w, false), p + ".attn.kv", c, 2 * c);
        std::vector<int32_t> ins = {q, kv};
        if (i == 0 && residual >= 0) ins.push_back(residual);
        res = b.op_outputs(OpType::kSoftmaxAttention,
                           SoftmaxAttentionAttrs{nh, scale, AttentionInputs::kQKvPacked}, ins, p + ".attn",
                           outs);
      } else {
        ++n_la;
        const int32_t v = linear(b, pvt_reduced_tokens(b, y, p, c, h, w, false), p + ".attn.v", c, c);
        const int64_t n = h * w;
        res = b.op_outputs(
            OpType::kReusedAttention, ReusedAttentionAttrs{nh},
            {scores, v, b.weight(p + ".attn.theta.weight", {nk, nk}), b.weight(p + ".attn.theta.bias", {nk}),
             b.weight(p + ".attn.psi.weight", {n, n}), b.weight(p + ".attn.psi.bias", {n})},
            p + ".attn", outs);
      }
      scores = export_scores ? res[1] : -1;
      y = linear(b, res[0], p + ".attn.proj", c, c);
      x = b.op(OpType::kAdd, NoAttrs{}, {x, y}, p + ".residual1");
      x = pvt_mlp_residual(b, x, p, c, h, w, false);
    }
    prev_stage_scores = scores;
    prev_h = h;
    prev_w = w;
    x = layer_norm(b, x, "norm" + ps, c, kPvtBlockLnEps);
    if (s < kStages) x = tokens_to_image(b, x, h, w, "stage" + ps);
    prev_c = c;
    const char* sep = s == 1 ? "" : ",";
    dims_desc += sep + std::to_string(c);
    depth_desc += sep + std::to_string(depth);
    va_desc += sep + std::to_string(n_va);
    la_desc += sep + std::to_string(n_la);
    heads_desc += sep + std::to_string(nh);
  }
  x = b.op(OpType::kReduceMean, ReduceMeanAttrs{{1}, false}, {x}, "pool");
  const int64_t classes = head[0];
  b.mark_output(linear(b, x, "head", c, classes));

  info->arch = "lavit";
  info->image_size = img;
  info->description = "LaViT: dims " + dims_desc + ", depths " + depth_desc + " (VA " + va_desc + ", LA " +
                      la_desc + "), heads " + heads_desc + ", N' " + std::to_string(nk) + ", " +
                      std::to_string(classes) + " classes, " + std::to_string(img) + "x" +
                      std::to_string(img);
  // docs/models.md §4.2: resize 256 (bicubic), centre-crop 224, ImageNet mean/std (scaled with the input
  // size).
  info->preprocess.crop_h = info->preprocess.crop_w = img;
  info->preprocess.resize_shorter = static_cast<int32_t>(256.0 / 224.0 * img);
  info->preprocess.interpolation = Interpolation::kBicubic;
  info->preprocess.channels = static_cast<int32_t>(in_ch);
  return Status::Ok();
}

}  // namespace vitrt::convert
