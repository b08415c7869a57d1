// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// PVT v2 (whai362/PVT classification/pvt_v2.py), docs/models.md §6.2: overlapping patch embeddings,
// spatial-reduction attention (strided conv + LN, or for the linear variant adaptive 7x7 pooling + 1x1 conv +
// LN + GELU), MLP with a 3x3 depthwise conv, a LayerNorm after each stage and a mean-pooled head.
#include <cmath>

#include "arch/arch.h"
#include "arch/blocks.h"
#include "arch/pvt_blocks.h"

namespace vitrt::convert {
namespace {

constexpr int kStages = 4;
constexpr int kPublishedHeads[kStages] = {1, 2, 5,
                                          8};  // docs/models.md §10: the same in every published size

int count_blocks(const Checkpoint& ckpt, int stage) {
  int n = 0;
  const std::string p = "block" + std::to_string(stage) + ".";
  while (ckpt.tensors.count(p + std::to_string(n) + ".norm1.weight")) ++n;
  return n;
}

}  // namespace

Status build_pvt_v2(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info) {
  std::vector<int> heads(kPublishedHeads, kPublishedHeads + kStages);
  if (!opt.heads.empty()) VITRT_RETURN_IF_ERROR(parse_heads_override(opt.heads, &heads));
  if (heads.size() != static_cast<size_t>(kStages))
    return invalid_argument("--heads: PVT v2 takes 4 head counts");
  const auto pe1 = b.shape_of("patch_embed1.proj.weight");
  const auto head = b.shape_of("head.weight");
  if (pe1.size() != 4 || head.size() != 2)
    return bad_input(
        "PVT v2: patch_embed1.proj.weight and head.weight are required to read the model's sizes");
  // The linear variant's spatial reduction is a 1x1 conv after pooling, present in every stage.
  const auto sr1 = b.shape_of("block1.0.attn.sr.weight");
  const bool linear_variant = sr1.size() == 4 && sr1[2] == 1 && b.has("block4.0.attn.sr.weight");
  const int64_t in_ch = pe1[1];
  const int img = opt.image_size ? opt.image_size : 224;
  if (img % 32 != 0)
    return invalid_argument("PVT v2: --image-size must be a multiple of 32, got " + std::to_string(img));

  int32_t x = b.input("image", Shape{1, in_ch, img, img});
  int64_t prev_c = in_ch, h = img, w = img;
  std::string desc = std::string(linear_variant ? "PVT v2 (linear)" : "PVT v2") + ": dims";
  std::string depth_desc;
  int64_t c = 0;
  for (int s = 1; s <= kStages; ++s) {
    const std::string ps = std::to_string(s);
    const auto pw = b.shape_of("patch_embed" + ps + ".proj.weight");
    if (pw.size() != 4) return bad_input("PVT v2: missing patch_embed" + ps + ".proj.weight");
    c = pw[0];
    x = pvt_patch_embed(b, x, s, prev_c, c, &h, &w);
    const int depth = count_blocks(ckpt, s);
    if (depth == 0)
      return bad_input("PVT v2: stage " + ps + " has no blocks (block" + ps + ".0.norm1.weight)");
    const int nh = heads[s - 1];
    if (c % nh != 0)
      return bad_input("PVT v2: stage " + ps + " width " + std::to_string(c) + " does not split into " +
                       std::to_string(nh) + " heads (pass --heads)");
    const float scale = 1.0f / std::sqrt(static_cast<float>(c / nh));
    for (int i = 0; i < depth; ++i) {
      const std::string p = "block" + ps + "." + std::to_string(i);
      int32_t y = layer_norm(b, x, p + ".norm1", c, kPvtBlockLnEps);
      const int32_t q = linear(b, y, p + ".attn.q", c, c);
      const int32_t kv_src = pvt_reduced_tokens(b, y, p, c, h, w, linear_variant);
      const int32_t kv = linear(b, kv_src, p + ".attn.kv", c, 2 * c);
      y = b.op(OpType::kSoftmaxAttention, SoftmaxAttentionAttrs{nh, scale, AttentionInputs::kQKvPacked},
               {q, kv}, p + ".attn");
      y = linear(b, y, p + ".attn.proj", c, c);
      x = b.op(OpType::kAdd, NoAttrs{}, {x, y}, p + ".residual1");
      x = pvt_mlp_residual(b, x, p, c, h, w, linear_variant);
    }
    x = layer_norm(b, x, "norm" + ps, c, kPvtBlockLnEps);
    if (s < kStages) x = tokens_to_image(b, x, h, w, "stage" + ps);
    prev_c = c;
    desc += (s == 1 ? " " : ",") + std::to_string(c);
    depth_desc += (s == 1 ? "" : ",") + std::to_string(depth);
  }
  x = b.op(OpType::kReduceMean, ReduceMeanAttrs{{1}, false}, {x}, "pool");
  const int64_t classes = head[0];
  b.mark_output(linear(b, x, "head", c, classes));

  info->arch = linear_variant ? "pvt_v2_li" : "pvt_v2";
  info->image_size = img;
  std::string heads_desc;
  for (int s = 0; s < kStages; ++s) heads_desc += (s ? "," : "") + std::to_string(heads[s]);
  info->description = desc + ", depths " + depth_desc + ", heads " + heads_desc + ", " +
                      std::to_string(classes) + " classes, " + std::to_string(img) + "x" +
                      std::to_string(img);
  // PVT classification/datasets.py: Resize(int(256/224*size), bicubic), CenterCrop(size), ImageNet mean/std.
  info->preprocess.crop_h = info->preprocess.crop_w = img;
  info->preprocess.resize_shorter = static_cast<int32_t>(256.0 / 224.0 * img);
  info->preprocess.interpolation = Interpolation::kBicubic;
  info->preprocess.channels = static_cast<int32_t>(in_ch);
  return Status::Ok();
}

}  // namespace vitrt::convert
