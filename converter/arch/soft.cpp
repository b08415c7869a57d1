// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SOFT and SOFT-Norm (fudan-zvg/SOFT models/softmax_free_*.py), docs/models.md §3.3–3.8:
//  * stage 1: a 3-conv stem (3x3 s2 → 3x3 s1 → 3x3 s2), stages 2–4: one 3x3 s2 conv; every conv followed by
//    BatchNorm + ReLU, here with the BatchNorm folded into the conv and the ReLU as its epilogue;
//  * stages 1–3: tokens + pos_embed{s}, then post-norm SOFT blocks, each attention ONE LinearAttention op
//    (landmark conv ratio 8/4/2 and V conv 9/5/3, both read from the weights);
//  * stage 4: the class token first, + pos_embed4, pre-norm PVT blocks (sr 1), final LayerNorm, class-token
//  head.
// Depths and widths come from the keys (SOFT-Small exists as 1,3,20,4 and 1,3,7,4); heads are C/32 unless
// --heads says otherwise. At an input size other than 224 the position tables (sized for 224) are resized
// here, bilinearly as SOFT does at run time. SOFT-Norm has the same keys and graph; only its pseudo-inverse
// differs (legacy Newton with the step size global over the batch, plus D^-1/2 normalisation).
#include <cmath>
#include <cstdlib>

#include "arch/arch.h"
#include "arch/blocks.h"
#include "arch/fold_batch_norm.h"
#include "arch/resize_pos_embed.h"

namespace vitrt::convert {
namespace {

constexpr int kStages = 4;
constexpr int64_t kHeadDim = 32;    // docs/models.md §10: h = C/32 in every stage
constexpr int64_t kStemWidth = 32;  // patch_embed1's first two convs
constexpr double kBnEps = 1e-5;
constexpr float kSoftLnEps = 1e-5f;        // SOFT blocks: norm1, norm2 (nn.LayerNorm default)
constexpr float kLandmarkLnEps = 1e-5f;    // Qnorm_act.0
constexpr float kPvtLnEps = 1e-6f;         // stage-4 blocks and the final norm
constexpr int32_t kNewtonIterations = 20;  // newton_maxiter in every config

int count_blocks(const Checkpoint& ckpt, int stage, const std::string& suffix) {
  int n = 0;
  const std::string p = "block" + std::to_string(stage) + ".";
  while (ckpt.tensors.count(p + std::to_string(n) + suffix)) ++n;
  return n;
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// conv (BN folded) + ReLU.
int32_t conv_bn_relu(GraphBuilder& b, const Checkpoint& ckpt, int32_t x, const std::string& conv,
                     const std::string& bn, int64_t cout, int64_t cin, int32_t stride) {
  int32_t w = kAbsent, bias = kAbsent;
  conv_bn_weights(b, ckpt, conv, bn, {cout, cin, 3, 3}, true, kBnEps, &w, &bias);
  Conv2dAttrs a{stride, stride, 1, 1};
  a.activation = Activation::kRelu;
  return b.op(OpType::kConv2d, a, {x, w, bias}, conv);
}

// A position table for `n_out` grid tokens (+ `extra` leading tokens kept as they are), resized from its
// square 224 grid when the grid differs.
int32_t pos_embed(GraphBuilder& b, const Checkpoint& ckpt, const std::string& key, int64_t extra, int64_t c,
                  int64_t out_h, int64_t out_w, std::string* error) {
  const auto shape = b.shape_of(key);
  const int64_t want = extra + out_h * out_w;
  if (shape.size() != 3 || shape[0] != 1 || shape[2] != c || shape[1] <= extra)
    return b.weight(key, {1, want, c});
  const int64_t grid_n = shape[1] - extra;
  const int64_t g = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(grid_n))));
  if (g * g != grid_n) {
    *error = "SOFT: " + key + " has " + std::to_string(shape[1]) + " rows, not a square grid" +
             (extra ? " plus a class token" : "");
    return b.weight(key, {1, want, c});
  }
  if (g == out_h && g == out_w) return b.weight(key, {1, want, c});
  b.ignore(key);
  if (!b.can_generate(key + ".resized", out_h * out_w, c))
    return b.constant(key + ".resized", Shape{1, 1, c},
                      {});  // an error is recorded: the graph never finishes
  const std::vector<float>& v = b.float_values(key);
  std::vector<float> grid(v.begin() + extra * c, v.end());
  std::vector<float> out(v.begin(), v.begin() + extra * c);
  const std::vector<float> resized = resize_pos_embed(grid, c, g, g, out_h, out_w);
  out.insert(out.end(), resized.begin(), resized.end());
  return b.constant(key + ".resized", Shape{1, want, c}, std::move(out));
}

Status build(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info, bool norm) {
  const char* family = norm ? "SOFT-Norm" : "SOFT";
  const std::string fam(family);
  const int img = opt.image_size ? opt.image_size : 224;
  if (img <= 0 || img % 32 != 0)
    return invalid_argument(fam +
                            ": --image-size must be a positive multiple of 32 (the stem and the three "
                            "stride-2 patch embeddings divide it by 32), got " +
                            std::to_string(img));

  // Widths from the patch-embedding convs, depths from the block keys.
  std::vector<int64_t> widths(kStages), depths(kStages);
  const auto stem = b.shape_of("patch_embed1.proj.6.weight");
  const auto stem0 = b.shape_of("patch_embed1.proj.0.weight");
  if (stem.size() != 4 || stem0.size() != 4)
    return bad_input(fam + ": patch_embed1.proj.{0,6}.weight are required to read the model's sizes");
  const int64_t in_ch = stem0[1];
  widths[0] = stem[0];
  for (int s = 2; s <= kStages; ++s) {
    const auto w = b.shape_of("patch_embed" + std::to_string(s) + ".proj.0.weight");
    if (w.size() != 4) return bad_input(fam + ": missing patch_embed" + std::to_string(s) + ".proj.0.weight");
    widths[s - 1] = w[0];
  }
  for (int s = 1; s <= 3; ++s) depths[s - 1] = count_blocks(ckpt, s, ".att.mha.W_q.weight");
  depths[3] = count_blocks(ckpt, 4, ".norm1.weight");
  for (int s = 1; s <= kStages; ++s)
    if (depths[s - 1] == 0) return bad_input(fam + ": stage " + std::to_string(s) + " has no blocks");
  const auto head = b.shape_of("head.weight");
  if (head.size() != 2) return bad_input(fam + ": head.weight [classes, C] is required");

  std::vector<int> heads;
  for (int s = 0; s < kStages; ++s) heads.push_back(static_cast<int>(widths[s] / kHeadDim));
  if (!opt.heads.empty()) VITRT_RETURN_IF_ERROR(parse_heads_override(opt.heads, &heads));
  if (heads.size() != static_cast<size_t>(kStages))
    return invalid_argument("--heads: SOFT takes 4 head counts");
  for (int s = 0; s < kStages; ++s)
    if (heads[s] < 1 || widths[s] % heads[s] != 0)
      return bad_input(fam + ": stage " + std::to_string(s + 1) + " width " + std::to_string(widths[s]) +
                       " does not split into " + std::to_string(heads[s]) + " heads (pass --heads)");

  int32_t iterations = kNewtonIterations;
  auto it = ckpt.args.find("newton_max_iter");
  if (it != ckpt.args.end()) {
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (end != it->second.c_str() && *end == '\0' && v >= 1 && v <= 1000)
      iterations = static_cast<int32_t>(v);
  }

  std::string error;
  int32_t x = b.input("image", Shape{1, in_ch, img, img});
  x = conv_bn_relu(b, ckpt, x, "patch_embed1.proj.0", "patch_embed1.proj.1", kStemWidth, in_ch, 2);
  x = conv_bn_relu(b, ckpt, x, "patch_embed1.proj.3", "patch_embed1.proj.4", kStemWidth, kStemWidth, 1);
  x = conv_bn_relu(b, ckpt, x, "patch_embed1.proj.6", "patch_embed1.proj.7", widths[0], kStemWidth, 2);
  std::vector<int64_t> landmarks;
  int64_t h = 0, w = 0;
  for (int s = 1; s <= 3; ++s) {
    const std::string ps = std::to_string(s);
    const int64_t c = widths[s - 1];
    if (s > 1)
      x = conv_bn_relu(b, ckpt, x, "patch_embed" + ps + ".proj.0", "patch_embed" + ps + ".proj.1", c,
                       widths[s - 2], 2);
    h = b.shape(x)[2];
    w = b.shape(x)[3];
    x = image_to_tokens(b, x, "patch_embed" + ps);
    x = b.op(OpType::kAdd, NoAttrs{}, {x, pos_embed(b, ckpt, "pos_embed" + ps, 0, c, h, w, &error)},
             "pos_embed" + ps + ".add");
    const int64_t nh = heads[s - 1], d = c / nh;
    int64_t stage_m = 0;
    for (int i = 0; i < depths[s - 1]; ++i) {
      const std::string p = "block" + ps + "." + std::to_string(i) + ".att";
      const std::string pa = p + ".mha.attn";
      const auto lw = b.shape_of(pa + ".Qlandmark_op.weight");
      const auto vc = b.shape_of(pa + ".conv.weight");
      int64_t r = lw.size() == 4 ? lw[2] : 1;
      const int64_t k = vc.size() == 4 ? vc[2] : 1;
      if (r < 1 || h / r < 1 || w / r < 1) {
        error = fam + ": stage " + ps + " landmark ratio " + std::to_string(r) + " leaves no landmark on a " +
                std::to_string(h) + "x" + std::to_string(w) + " grid (input too small)";
        r = 1;
      }
      LinearAttentionAttrs la;
      la.num_heads = static_cast<int32_t>(nh);
      la.height = static_cast<int32_t>(h);
      la.width = static_cast<int32_t>(w);
      la.q_scale = static_cast<float>(1.0 / std::sqrt(std::sqrt(static_cast<double>(d))));
      la.landmark_ratio = static_cast<int32_t>(r);
      la.landmark_ln_eps = kLandmarkLnEps;
      la.newton_iterations = iterations;
      if (norm) {
        la.pinv = PseudoInverse::kNewtonLegacy;
        la.newton_regularizer = 0.0f;
        la.symmetric_normalization = true;
      } else {
        la.pinv = PseudoInverse::kNewtonScaled;
        la.newton_regularizer = 0.01f;
      }
      stage_m = (h / r) * (w / r);
      const int32_t q = linear(b, x, p + ".mha.W_q", c, c);
      const int32_t v = linear(b, x, p + ".mha.W_v", c, c);
      int32_t y = b.op(OpType::kLinearAttention, la,
                       {q, v, b.weight(pa + ".Qlandmark_op.weight", {d, d, r, r}),
                        b.weight(pa + ".Qnorm_act.0.weight", {d}), b.weight(pa + ".Qnorm_act.0.bias", {d}),
                        b.weight(pa + ".conv.weight", {nh, 1, k, k})},
                       pa);
      y = linear(b, y, p + ".mha.ff", c, c);
      x = b.op(OpType::kAdd, NoAttrs{}, {x, y}, p + ".residual1");
      x = layer_norm(b, x, p + ".norm1", c, kSoftLnEps);  // post-norm
      const auto ff1 = b.shape_of(p + ".ff1.weight");
      const int64_t hidden = ff1.size() == 2 ? ff1[0] : 4 * c;
      y = linear(b, x, p + ".ff1", c, hidden);
      y = gelu(b, y, GeluApproximation::kTanh, p + ".act");  // Approx_GeLU
      y = linear(b, y, p + ".ff2", hidden, c);
      x = b.op(OpType::kAdd, NoAttrs{}, {x, y}, p + ".residual2");
      x = layer_norm(b, x, p + ".norm2", c, kSoftLnEps);
    }
    landmarks.push_back(stage_m);
    x = tokens_to_image(b, x, h, w, "stage" + ps);
  }

  // Stage 4: PVT blocks with a class token.
  const int64_t c = widths[3];
  x = conv_bn_relu(b, ckpt, x, "patch_embed4.proj.0", "patch_embed4.proj.1", c, widths[2], 2);
  h = b.shape(x)[2];
  w = b.shape(x)[3];
  x = image_to_tokens(b, x, "patch_embed4");
  x = b.op(OpType::kConcat, ConcatAttrs{1}, {b.weight("cls_token", {1, 1, c}), x}, "cls_token.concat");
  x = b.op(OpType::kAdd, NoAttrs{}, {x, pos_embed(b, ckpt, "pos_embed4", 1, c, h, w, &error)},
           "pos_embed4.add");
  const int nh4 = heads[3];
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c / nh4)));
  for (int i = 0; i < depths[3]; ++i) {
    const std::string p = "block4." + std::to_string(i);
    int32_t y = layer_norm(b, x, p + ".norm1", c, kPvtLnEps);
    const int32_t q = linear(b, y, p + ".attn.q", c, c);
    const int32_t kv = linear(b, y, p + ".attn.kv", c, 2 * c);
    y = b.op(OpType::kSoftmaxAttention, SoftmaxAttentionAttrs{nh4, scale, AttentionInputs::kQKvPacked},
             {q, kv}, p + ".attn");
    y = linear(b, y, p + ".attn.proj", c, c);
    x = b.op(OpType::kAdd, NoAttrs{}, {x, y}, p + ".residual1");
    y = layer_norm(b, x, p + ".norm2", c, kPvtLnEps);
    const auto fc1 = b.shape_of(p + ".mlp.fc1.weight");
    const int64_t hidden = fc1.size() == 2 ? fc1[0] : 4 * c;
    y = linear(b, y, p + ".mlp.fc1", c, hidden);
    y = gelu(b, y, GeluApproximation::kErf, p + ".mlp.act");
    y = linear(b, y, p + ".mlp.fc2", hidden, c);
    x = b.op(OpType::kAdd, NoAttrs{}, {x, y}, p + ".residual2");
  }
  x = layer_norm(b, x, "norm", c, kPvtLnEps);
  x = b.op(OpType::kSlice, SliceAttrs{1, 0, 1}, {x}, "cls");
  x = b.op(OpType::kReshape, ReshapeAttrs{{0, -1}}, {x}, "cls.flatten");
  const int64_t classes = head[0];
  b.mark_output(linear(b, x, "head", c, classes));
  if (!error.empty()) return bad_input(error);

  std::vector<int64_t> heads64(heads.begin(), heads.end());
  info->arch = norm ? "soft_norm" : "soft";
  info->image_size = img;
  info->description = fam + ": dims " + join(widths) + ", depths " + join(depths) + ", heads " +
                      join(heads64) + ", landmarks " + join(landmarks) + " (stages 1-3), Newton " +
                      (norm ? "legacy x" : "scaled x") + std::to_string(iterations) +
                      (norm ? " + D^-1/2 normalisation" : "") + ", " + std::to_string(classes) +
                      " classes, " + std::to_string(img) + "x" + std::to_string(img);
  // timm 0.3.x _cfg via resolve_data_config: crop_pct 0.9, bicubic, ImageNet mean/std (docs/models.md §2).
  info->preprocess.crop_h = info->preprocess.crop_w = img;
  info->preprocess.resize_shorter = static_cast<int32_t>(std::floor(img / 0.9));
  info->preprocess.interpolation = Interpolation::kBicubic;
  info->preprocess.mean = {0.485f, 0.456f, 0.406f};
  info->preprocess.std = {0.229f, 0.224f, 0.225f};
  info->preprocess.channels = static_cast<int32_t>(in_ch);
  return Status::Ok();
}

}  // namespace

Status build_soft(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info) {
  return build(b, ckpt, opt, info, false);
}

Status build_soft_norm(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info) {
  return build(b, ckpt, opt, info, true);
}

}  // namespace vitrt::convert
