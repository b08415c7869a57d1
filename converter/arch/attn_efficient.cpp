// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Efficient Attention in a ViT block (docs/models.md §5.4, §7.7 and §7.8; docs/linear_attention.md,
// KernelizedAttention SoftmaxPair): the official `EfficientAttention` (cmsflash/efficient-attention) run on
// the patch tokens as their H×W grid, under `attn.attn` (tools/reference/vitrt_reference/attn_efficient.py's
// GridAttention). Its 1×1 convs `keys`, `queries` [dk,C,1,1], `values` [dv,C,1,1] and `reprojection`
// [C,dv,1,1], all with bias, act on each token alone, so they are Linears on the [B,N,C] tokens; the
// KernelizedAttention op takes the per-head softmax pair; the module adds its input (the residual is inside).
// The head count is not in the keys: --heads. A row of arch/vit_attention.h.
#include "arch/blocks.h"
#include "arch/vit_attention.h"

namespace vitrt::convert {
namespace {

// The 1×1 conv `prefix` [out,in,1,1] (+ bias [out]) as a Linear on tokens x [B,N,in]. -1 when the weight
// is absent or misshapen (the builder records why).
int32_t pointwise(GraphBuilder& b, int32_t x, const std::string& prefix, int64_t in, int64_t* out_channels) {
  const std::string key = prefix + ".weight";
  const auto s = b.shape_of(key);
  if (s.size() != 4 || s[0] < 1 || s[1] != in || s[2] != 1 || s[3] != 1) {
    if (s.empty())
      b.weight(key, {1, in, 1, 1});  // records it missing
    else
      b.fail("'" + key + "' should be a 1x1 conv weight [out," + std::to_string(in) + ",1,1]");
    return -1;
  }
  const int64_t out = s[0];
  if (!b.can_generate(key + ".as_linear", out, in)) return -1;
  std::vector<float> w = b.float_values(key);  // [out,in,1,1] is [out,in] in memory
  b.ignore(key);
  if (static_cast<int64_t>(w.size()) != out * in) return -1;  // not float data: float_values recorded it
  *out_channels = out;
  const int32_t wt = b.constant(key + ".as_linear", Shape{out, in}, std::move(w));
  return b.op(OpType::kLinear, LinearAttrs{}, {x, wt, b.weight(prefix + ".bias", {out})}, prefix);
}

}  // namespace

bool detect_efficient_attention(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".attn.keys.weight") && b.has(prefix + ".attn.reprojection.weight");
}

Status emit_efficient_attention(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  const std::string p = site.prefix + ".attn";
  const int64_t c = site.dim;
  if (site.class_tokens != 0)
    return unsupported(
        "Efficient Attention at '" + p +
        "' runs on the patch grid, but this ViT has a class token (docs/models.md §7.8: its ViT "
        "has none and mean-pools the tokens)");
  int64_t dk = 0, dq = 0, dv = 0, back = 0;
  const int32_t k = pointwise(b, x, p + ".keys", c, &dk), q = pointwise(b, x, p + ".queries", c, &dq),
                v = pointwise(b, x, p + ".values", c, &dv);
  if (k < 0 || q < 0 || v < 0) return Status::Ok();  // recorded; finish() reports it
  if (dq != dk)
    return bad_input("Efficient Attention: '" + p + ".queries.weight' has " + std::to_string(dq) +
                     " channels but '" + p + ".keys.weight' " + std::to_string(dk));
  if (site.heads < 1 || dk % site.heads != 0 || dv % site.heads != 0)
    return bad_input("Efficient Attention at '" + p + "': " + std::to_string(site.heads) +
                     " heads do not divide its " + std::to_string(dk) + " key and " + std::to_string(dv) +
                     " value channels (pass --heads)");
  KernelizedAttentionAttrs a;
  a.kind = KernelizedKind::kSoftmaxPair;
  a.num_heads = site.heads;
  a.eps = 0.0f;
  a.scale = 1.0f;
  const int32_t att = b.op(OpType::kKernelizedAttention, a, {q, k, v}, p);
  const int32_t r = pointwise(b, att, p + ".reprojection", dv, &back);
  if (r < 0) return Status::Ok();
  if (back != c)
    return bad_input("Efficient Attention: '" + p + ".reprojection.weight' gives " + std::to_string(back) +
                     " channels, the tokens have " + std::to_string(c));
  *out = b.op(OpType::kAdd, NoAttrs{}, {r, x}, p + ".residual");  // the module adds its input
  return Status::Ok();
}

}  // namespace vitrt::convert
