// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Nyströmformer in a ViT block (docs/models.md §5.4 and §7.4, docs/linear_attention.md "Nyströmformer"): the
// official LRA wrapper `Attention` (mlpen/Nystromformer) with W_q, W_k, W_v Linear(C, C) with bias, the
// NystromAttention op (Q and K scaled by d^-1/4, 6 iterations) and ff Linear(C, C). The V conv is there when
// `attn.conv.weight` [h,1,ks,1] is. What the keys cannot tell: the landmark count (the checkpoint args'
// num_landmarks, else --landmarks) and the initialisation of the iterative inverse (the LRA code's
// "original", one maximum over the batch and heads, unless --nystrom-init per_head). With as many landmarks
// as tokens the official forward is exact softmax attention, and so is the graph. A row of
// arch/vit_attention.h.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "arch/blocks.h"
#include "arch/vit_attention.h"

namespace vitrt::convert {
namespace {

constexpr int32_t kOfficialIterations = 6;  // NystromAttention.iterative_inv's n_iter

// A positive int32 from a checkpoint args value ("5"), else 0.
int64_t positive_int(const std::string& text) {
  if (text.empty()) return 0;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < 1 || v > std::numeric_limits<int32_t>::max()) return 0;
  return v;
}

// One landmark per token: the official forward skips the approximation and computes softmax(Q·Kᵀ)·V exactly,
// Q and K each / d^(1/4), so the scores carry 1/√d; the V conv, when there, is added as in the other branch.
// q, k, v [B,N,C]; conv_w the [h,1,ks,1] weight or kAbsent. Returns [B,N,C] before ff.
int32_t exact_nystrom(GraphBuilder& b, const VitAttentionSite& site, int32_t q, int32_t k, int32_t v,
                      int32_t conv_w) {
  const std::string& p = site.prefix;
  const int64_t h = site.heads, c = site.dim, d = c / h;
  SoftmaxAttentionAttrs sa;
  sa.num_heads = site.heads;
  sa.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  sa.inputs = AttentionInputs::kSeparate;
  int32_t y = b.op(OpType::kSoftmaxAttention, sa, {q, k, v}, p + ".attn");
  if (conv_w == kAbsent) return y;
  // conv(V) on V's heads [B,h,N,d] as an image: Conv2d(h, h, (ks,1), padding (ks//2,0), groups=h).
  int32_t vh = b.op(OpType::kReshape, ReshapeAttrs{{0, 0, h, d}}, {v}, p + ".attn.v_heads");
  vh = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {vh}, p + ".attn.v_heads.permute");
  Conv2dAttrs dw;
  dw.pad_h = static_cast<int32_t>(b.shape_of(p + ".attn.conv.weight")[2] / 2);
  dw.groups = site.heads;
  int32_t vc = b.op(OpType::kConv2d, dw, {vh, conv_w, kAbsent}, p + ".attn.v_conv");
  vc = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {vc}, p + ".attn.v_conv.permute");
  vc = b.op(OpType::kReshape, ReshapeAttrs{{0, 0, c}}, {vc}, p + ".attn.v_conv.merge");
  return b.op(OpType::kAdd, NoAttrs{}, {y, vc}, p + ".attn.sum");
}

}  // namespace

Status resolve_nystrom_options(const Checkpoint& ckpt, const ConvertOptions& opt, NystromChoice* out) {
  if (opt.landmarks < 0 || opt.landmarks > std::numeric_limits<int32_t>::max())
    return invalid_argument("--landmarks " + std::to_string(opt.landmarks) +
                            " is out of range (1 to 2^31-1)");
  if (opt.nystrom_init != "auto" && opt.nystrom_init != "global" && opt.nystrom_init != "per_head")
    return invalid_argument("--nystrom-init must be global or per_head, got '" + opt.nystrom_init + "'");
  out->landmarks = opt.landmarks;
  for (const char* key : {"num_landmarks", "landmarks"}) {
    auto it = ckpt.args.find(key);
    if (it == ckpt.args.end() || it->second == "None" || it->second.empty()) continue;
    const int64_t m = positive_int(it->second);
    if (m == 0)
      return bad_input("the checkpoint's args give " + std::string(key) + " = '" + it->second +
                       "', which is not a positive landmark count");
    // The checkpoint's own value first; a flag that contradicts it is a mistake, not an override.
    if (opt.landmarks != 0 && opt.landmarks != m)
      return invalid_argument("--landmarks " + std::to_string(opt.landmarks) +
                              " contradicts the checkpoint's args (" + key + " = " + std::to_string(m) + ")");
    out->landmarks = m;
    break;
  }
  out->init = opt.nystrom_init == "per_head" ? NystromInit::kPerHead : NystromInit::kGlobal;
  return Status::Ok();
}

// The LRA wrapper's W_q/W_k/W_v/ff are the same for every LRA attention (softmax, Nyström without conv,
// Linformer with attn.E, ...): only the V conv says Nyström. Without it, --attn nystrom.
bool detect_nystrom(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".W_q.weight") && b.has(prefix + ".ff.weight") && b.has(prefix + ".attn.conv.weight");
}

Status emit_nystrom(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  const std::string& p = site.prefix;
  const int64_t c = site.dim;
  if (site.heads < 1 || c % site.heads != 0)
    return bad_input("Nyströmformer at '" + p + "': " + std::to_string(site.heads) +
                     " heads do not divide the width " + std::to_string(c) + " (pass --heads)");
  const int64_t d = c / site.heads, m = site.nystrom.landmarks;
  if (m < 1)
    return invalid_argument("Nyströmformer at '" + p +
                            "': the landmark count is not in the keys; pass --landmarks M (or give the "
                            "checkpoint args num_landmarks)");
  if (m > site.tokens)
    return invalid_argument("Nyströmformer at '" + p + "': " + std::to_string(m) + " landmarks for " +
                            std::to_string(site.tokens) + " tokens (at most one landmark per token)");
  const int32_t q = linear(b, x, p + ".W_q", c, c), k = linear(b, x, p + ".W_k", c, c),
                v = linear(b, x, p + ".W_v", c, c);
  const std::string conv = p + ".attn.conv.weight";
  int32_t conv_w = kAbsent;
  if (b.has(conv)) {
    const auto w = b.shape_of(conv);
    if (w.size() != 4 || w[0] != site.heads || w[1] != 1 || w[2] < 1 || w[2] % 2 == 0 || w[3] != 1)
      return bad_input("Nyströmformer: '" + conv + "' must be a depthwise [" + std::to_string(site.heads) +
                       ",1,ks,1] V conv with ks odd (the head count from --heads)");
    conv_w = b.weight(conv, w);
  }
  if (m == site.tokens) {  // the official forward's num_landmarks == seq_len branch (docs/models.md §7.4)
    *out = linear(b, exact_nystrom(b, site, q, k, v, conv_w), p + ".ff", c, c);
    return Status::Ok();
  }
  NystromAttentionAttrs a;
  a.num_heads = site.heads;
  a.landmarks = static_cast<int32_t>(m);
  // The LRA code divides Q and K by sqrt(sqrt(d)); the op multiplies by that divisor's float reciprocal.
  a.q_scale = a.k_scale = static_cast<float>(1.0 / std::sqrt(std::sqrt(static_cast<double>(d))));
  a.init = site.nystrom.init;
  a.iterations = kOfficialIterations;
  std::vector<int32_t> in = {q, k, v};
  if (conv_w != kAbsent) in.push_back(conv_w);
  const int32_t y = b.op(OpType::kNystromAttention, a, in, p + ".attn");
  *out = linear(b, y, p + ".ff", c, c);
  return Status::Ok();
}

}  // namespace vitrt::convert
