// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ViT / DeiT (timm VisionTransformer as used by facebookresearch/deit), docs/models.md §5. Pre-norm blocks
// with LN eps 1e-6, packed qkv, erf GELU, class-token head; distilled variants average the cls and dist
// heads.
#include <cmath>

#include "arch/arch.h"
#include "arch/blocks.h"
#include "arch/vit_attention.h"

namespace vitrt::convert {
namespace {

constexpr float kLnEps = 1e-6f;
constexpr int64_t kDefaultHeadDim = 64;  // docs/models.md §10: h = C/64 for DeiT/ViT

int count_blocks(const Checkpoint& ckpt, const std::string& prefix) {
  int n = 0;
  while (ckpt.tensors.count(prefix + std::to_string(n) + ".norm1.weight")) ++n;
  return n;
}

}  // namespace

Status build_deit(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info) {
  const auto pw = b.shape_of("patch_embed.proj.weight");
  const auto pos = b.shape_of("pos_embed");
  const auto head = b.shape_of("head.weight");
  if (pw.size() != 4 || pos.size() != 3 || head.size() != 2)
    return bad_input(
        "DeiT: patch_embed.proj.weight [C,3,p,p], pos_embed [1,N,C] and head.weight [classes,C] are "
        "required to read the model's sizes");
  const int64_t c = pw[0], in_ch = pw[1], patch = pw[2];
  const bool distilled = b.has("dist_token");
  // The head reads the class token, or the mean of the patch tokens (a ViT without class token, as Efficient
  // Attention's grid needs: docs/models.md §7.8; timm's global_pool='avg' with one, by --pool mean).
  const bool class_token = b.has("cls_token");
  if (opt.pool != "auto" && opt.pool != "token" && opt.pool != "mean")
    return invalid_argument("--pool must be auto, token or mean, got '" + opt.pool + "'");
  const bool mean_pool = opt.pool == "mean" || (opt.pool == "auto" && !class_token);
  if (!class_token && (opt.pool == "token" || distilled))
    return bad_input(std::string("DeiT: no cls_token in the checkpoint, ") +
                     (distilled ? "but a dist_token" : "so --pool token has no token to read"));
  if (mean_pool && distilled)
    return unsupported("DeiT: --pool mean on a distilled model (its two heads read their own tokens)");
  const int64_t extra = class_token ? (distilled ? 2 : 1) : 0;
  const int64_t num_patches = pos[1] - extra;
  const int64_t grid = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(num_patches))));
  if (grid * grid != num_patches || pw[3] != patch)
    return bad_input("DeiT: pos_embed has " + std::to_string(pos[1]) +
                     " tokens, which is not a square grid (+" + std::to_string(extra) + " class tokens)");
  const int64_t img = grid * patch;
  if (opt.image_size && opt.image_size != img)
    return unsupported("DeiT: this checkpoint's position embeddings are for " + std::to_string(img) + "x" +
                       std::to_string(img) + " inputs; --image-size " + std::to_string(opt.image_size) +
                       " would need a resized position table, which is not supported");
  const int depth = count_blocks(ckpt, "blocks.");
  if (depth == 0) return bad_input("DeiT: no transformer blocks (blocks.0.norm1.weight) in the checkpoint");
  std::vector<int> heads = {static_cast<int>(c / kDefaultHeadDim)};
  if (!opt.heads.empty()) VITRT_RETURN_IF_ERROR(parse_heads_override(opt.heads, &heads));
  if (heads.size() != 1) return invalid_argument("--heads: DeiT takes one head count");
  if (heads[0] < 1 || c % heads[0] != 0)
    return bad_input("DeiT: embed dim " + std::to_string(c) + " does not split into " +
                     std::to_string(heads[0]) + " heads (pass --heads)");
  const int64_t hidden =
      b.shape_of("blocks.0.mlp.fc1.weight").empty() ? 4 * c : b.shape_of("blocks.0.mlp.fc1.weight")[0];
  const int64_t classes = head[0];
  const VitAttentionKind* attention = nullptr;
  VITRT_RETURN_IF_ERROR(choose_vit_attention(b, opt.attn, "blocks.0.attn", &attention));
  NystromChoice nystrom;
  if (std::string(attention->name) == "nystrom") {  // the choice shows in the description below
    VITRT_RETURN_IF_ERROR(resolve_nystrom_options(ckpt, opt, &nystrom));
  } else {
    // A Nyström option on another attention would change nothing: say so rather than ignore it.
    const char* flag =
        opt.landmarks != 0 ? "--landmarks" : (opt.nystrom_init != "auto" ? "--nystrom-init" : nullptr);
    if (flag)
      return invalid_argument(
          std::string(flag) + " applies to --attn nystrom only; " +
          (opt.attn.empty() || opt.attn == "auto" ? "the checkpoint's attention is " : "--attn is ") +
          attention->name);
  }

  int32_t x = b.input("image", Shape{1, in_ch, img, img});
  x = b.op(OpType::kConv2d, Conv2dAttrs{static_cast<int32_t>(patch), static_cast<int32_t>(patch)},
           {x, b.weight("patch_embed.proj.weight", {c, in_ch, patch, patch}),
            b.weight("patch_embed.proj.bias", {c})},
           "patch_embed.proj");
  x = image_to_tokens(b, x, "patch_embed");
  if (class_token) {
    std::vector<int32_t> tokens = {b.weight("cls_token", {1, 1, c})};
    if (distilled) tokens.push_back(b.weight("dist_token", {1, 1, c}));
    tokens.push_back(x);
    x = b.op(OpType::kConcat, ConcatAttrs{1}, tokens, "cls_token.concat");
  }
  x = b.op(OpType::kAdd, NoAttrs{}, {x, b.weight("pos_embed", {1, num_patches + extra, c})}, "pos_embed.add");
  for (int i = 0; i < depth; ++i) {
    const std::string p = "blocks." + std::to_string(i);
    int32_t h = layer_norm(b, x, p + ".norm1", c, kLnEps);
    VITRT_RETURN_IF_ERROR(attention->emit(
        b, VitAttentionSite{p + ".attn", c, heads[0], num_patches + extra, nystrom, extra}, h, &h));
    x = b.op(OpType::kAdd, NoAttrs{}, {x, h}, p + ".residual1");
    h = layer_norm(b, x, p + ".norm2", c, kLnEps);
    h = linear(b, h, p + ".mlp.fc1", c, hidden);
    h = gelu(b, h, GeluApproximation::kErf, p + ".mlp.act");
    h = linear(b, h, p + ".mlp.fc2", hidden, c);
    x = b.op(OpType::kAdd, NoAttrs{}, {x, h}, p + ".residual2");
  }
  x = layer_norm(b, x, "norm", c, kLnEps);
  auto token_logits = [&](int64_t index, const std::string& head_name) {
    int32_t t = b.op(OpType::kSlice, SliceAttrs{1, index, index + 1}, {x}, head_name + ".token");
    t = b.op(OpType::kReshape, ReshapeAttrs{{0, -1}}, {t}, head_name + ".flatten");
    return linear(b, t, head_name, c, classes);
  };
  int32_t logits;
  if (mean_pool) {
    if (extra) x = b.op(OpType::kSlice, SliceAttrs{1, extra, extra + num_patches}, {x}, "head.patches");
    x = b.op(OpType::kReduceMean, ReduceMeanAttrs{{1}, false}, {x}, "head.pool");
    logits = linear(b, x, "head", c, classes);
  } else {
    logits = token_logits(0, "head");
  }
  if (distilled) {
    const int32_t dist = token_logits(1, "head_dist");
    logits = b.op(OpType::kAdd, NoAttrs{}, {logits, dist}, "head.sum");
    logits = b.op(OpType::kMul, NoAttrs{}, {logits, b.constant("head.half", Shape{1}, {0.5f})}, "head.mean");
  }
  b.mark_output(logits);

  info->arch = distilled ? "deit_distilled" : "deit";
  info->image_size = static_cast<int>(img);
  info->description =
      std::string(distilled ? "DeiT (distilled)" : "DeiT") + ": embed " + std::to_string(c) + ", depth " +
      std::to_string(depth) + ", " + std::to_string(heads[0]) + " heads" +
      (attention == &vit_attention_kinds()[0] ? "" : std::string(", attention ") + attention->name) +
      (nystrom.landmarks ? ", " + std::to_string(nystrom.landmarks) + " landmarks, " +
                               (nystrom.init == NystromInit::kGlobal ? "global" : "per-head") + " init"
                         : std::string()) +
      (mean_pool ? ", mean-pooled" : "") + ", mlp " + std::to_string(hidden) + ", patch " +
      std::to_string(patch) + ", " + std::to_string(classes) + " classes, " + std::to_string(img) + "x" +
      std::to_string(img);
  // facebookresearch/deit eval: Resize(int(224/0.875)=256, bicubic), CenterCrop(224), ImageNet mean/std.
  info->preprocess.crop_h = info->preprocess.crop_w = static_cast<int32_t>(img);
  info->preprocess.resize_shorter = static_cast<int32_t>(img / 0.875);
  info->preprocess.interpolation = Interpolation::kBicubic;
  info->preprocess.channels = static_cast<int32_t>(in_ch);
  return Status::Ok();
}

}  // namespace vitrt::convert
