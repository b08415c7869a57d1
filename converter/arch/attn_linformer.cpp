// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Linformer in a ViT block (docs/linear_attention.md, "Linformer"): keys and values are compressed along the
// tokens, N -> k, by a learned [k, N] matrix, then ordinary softmax attention runs on N x k scores (the fused
// SoftmaxAttention op with separate q, k, v). A model built for fewer tokens than the matrix was trained for
// uses its first N columns (fairseq `weight[:, :N]`, lucidrains `proj[:N]`).
#include <cmath>

#include "arch/blocks.h"
#include "arch/vit_attention.h"

namespace vitrt::convert {
namespace {

// The [k, N] compression matrix from checkpoint tensor `key`, stored [k, L] (fairseq Linear weight) or, with
// `stored_transposed`, [L, k] (lucidrains Parameter); L >= N. Returns -1 (the builder records why) when
// absent or misshapen.
int32_t compression(GraphBuilder& b, const std::string& key, int64_t tokens, bool stored_transposed,
                    int64_t* k_out) {
  const auto s = b.shape_of(key);
  if (s.size() != 2) {
    if (s.empty()) return b.weight(key, {stored_transposed ? tokens : 1, 1});  // records it missing
    b.fail("'" + key + "' should be a 2-D compression matrix, got " + std::to_string(s.size()) +
           " dimensions");
    return -1;
  }
  const int64_t k = stored_transposed ? s[1] : s[0];
  const int64_t trained = stored_transposed ? s[0] : s[1];
  if (k < 1 || trained < tokens) {
    b.fail("'" + key + "' compresses " + std::to_string(trained) + " tokens into " + std::to_string(k) +
           ", but the model has " + std::to_string(tokens) + " tokens (class tokens included)");
    return -1;
  }
  *k_out = k;
  if (!stored_transposed && trained == tokens) return b.weight(key, {k, tokens});
  if (!b.can_generate(key, k, tokens)) return -1;
  const std::vector<float>& src = b.float_values(key);
  b.ignore(key);
  if (static_cast<int64_t>(src.size()) != k * trained) return -1;  // not float data: float_values recorded it
  std::vector<float> dst(static_cast<size_t>(k * tokens));
  for (int64_t r = 0; r < k; ++r)
    for (int64_t n = 0; n < tokens; ++n)
      dst[r * tokens + n] = stored_transposed ? src[n * k + r] : src[r * trained + n];
  return b.constant(key + "[:N]", Shape{k, tokens}, std::move(dst));
}

// [k, N] · x [B, N, C] -> [B, k, C].
int32_t compress(GraphBuilder& b, int32_t matrix, int32_t x, const std::string& name) {
  return b.op(OpType::kMatMul, NoAttrs{}, {matrix, x}, name);
}

Status check_heads(const VitAttentionSite& site, int64_t inner, const std::string& key) {
  if (inner % site.heads != 0)
    return bad_input("Linformer: '" + key + "' has " + std::to_string(inner) +
                     " rows, which do not split into " + std::to_string(site.heads) +
                     " heads (pass --heads)");
  return Status::Ok();
}

}  // namespace

bool detect_linformer_fairseq(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".compress_k.weight") && b.has(prefix + ".q_proj.weight");
}

// fairseq MultiheadLinearAttention: k = k_proj(E·x), v = v_proj(F·x) (biases after the compression), q scaled
// by d^-1/2; F = E when `shared_kv_compressed` (no compress_v keys).
Status emit_linformer_fairseq(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  const std::string& p = site.prefix;
  const int64_t c = site.dim;
  VITRT_RETURN_IF_ERROR(check_heads(site, c, p + ".q_proj.weight"));
  int64_t k_len = 0, v_len = 0;
  const int32_t e = compression(b, p + ".compress_k.weight", site.tokens, false, &k_len);
  const bool shared = !b.has(p + ".compress_v.weight");
  const int32_t f = shared ? e : compression(b, p + ".compress_v.weight", site.tokens, false, &v_len);
  if (e < 0 || f < 0) return Status::Ok();  // recorded; finish() reports it
  if (!shared && v_len != k_len)
    return bad_input("Linformer: " + p + ".compress_k compresses to " + std::to_string(k_len) +
                     " tokens but compress_v to " + std::to_string(v_len));
  const int32_t q = linear(b, x, p + ".q_proj", c, c);
  const int32_t xk = compress(b, e, x, p + ".compress_k");
  const int32_t xv = shared ? xk : compress(b, f, x, p + ".compress_v");
  const int32_t k = linear(b, xk, p + ".k_proj", c, c);
  const int32_t v = linear(b, xv, p + ".v_proj", c, c);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c / site.heads));
  const int32_t h = b.op(OpType::kSoftmaxAttention,
                         SoftmaxAttentionAttrs{site.heads, scale, AttentionInputs::kSeparate}, {q, k, v}, p);
  *out = linear(b, h, p + ".out_proj", c, c);
  return Status::Ok();
}

bool detect_linformer_lucidrains(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".proj_k") && b.has(prefix + ".to_q.weight");
}

// lucidrains LinformerSelfAttention: keys = proj_kᵀ·to_k(x), values = proj_vᵀ·to_v(x) (share_kv: no to_v or
// proj_v, the compressed keys are the values), softmax(q kᵀ d^-1/2) v, to_out with bias. With `one_kv_head`
// to_k has d rows and the one key/value head serves every query head.
Status emit_linformer_lucidrains(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  const std::string& p = site.prefix;
  const int64_t c = site.dim;
  const auto qs = b.shape_of(p + ".to_q.weight");
  const auto ks = b.shape_of(p + ".to_k.weight");
  if (qs.size() != 2 || ks.size() != 2)
    return bad_input("Linformer: " + p + ".to_q.weight and .to_k.weight must be [inner, C] Linear weights");
  const int64_t inner = qs[0];
  VITRT_RETURN_IF_ERROR(check_heads(site, inner, p + ".to_q.weight"));
  const int64_t head_dim = inner / site.heads;
  const int64_t kv_dim = ks[0];
  if (kv_dim != inner && kv_dim != head_dim)
    return bad_input("Linformer: " + p + ".to_k.weight has " + std::to_string(kv_dim) + " rows; expected " +
                     std::to_string(inner) + " (a key per head) or " + std::to_string(head_dim) +
                     " (one_kv_head) for " + std::to_string(site.heads) + " heads");
  const bool share_kv = !b.has(p + ".to_v.weight");  // then there is no proj_v either
  int64_t k_len = 0, v_len = 0;
  const int32_t e = compression(b, p + ".proj_k", site.tokens, true, &k_len);
  const int32_t f = share_kv ? e : compression(b, p + ".proj_v", site.tokens, true, &v_len);
  if (e < 0 || f < 0) return Status::Ok();  // recorded; finish() reports it
  if (!share_kv && v_len != k_len)
    return bad_input("Linformer: " + p + ".proj_k compresses to " + std::to_string(k_len) +
                     " tokens but proj_v to " + std::to_string(v_len));
  const int32_t q = linear(b, x, p + ".to_q", c, inner, false);
  int32_t k = compress(b, e, linear(b, x, p + ".to_k", c, kv_dim, false), p + ".proj_k");
  int32_t v = share_kv ? k : compress(b, f, linear(b, x, p + ".to_v", c, kv_dim, false), p + ".proj_v");
  if (kv_dim != inner) {  // one_kv_head: the same key/value head for every query head
    k = b.op(OpType::kConcat, ConcatAttrs{2}, std::vector<int32_t>(site.heads, k), p + ".k_heads");
    v = b.op(OpType::kConcat, ConcatAttrs{2}, std::vector<int32_t>(site.heads, v), p + ".v_heads");
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const int32_t h = b.op(OpType::kSoftmaxAttention,
                         SoftmaxAttentionAttrs{site.heads, scale, AttentionInputs::kSeparate}, {q, k, v}, p);
  *out = linear(b, h, p + ".to_out", inner, c);
  return Status::Ok();
}

bool detect_linformer_lra(const GraphBuilder& b, const std::string& prefix) {
  return b.has(prefix + ".W_q.weight") && b.has(prefix + ".attn.E");
}

// mlpen/Nystromformer's LRA Linformer: the Attention wrapper (W_q, W_k, W_v, ff with bias) around
// LinformerAttention, whose E [h, k, L] compresses each head's keys and values (K' = E_h·K_h, V' = E_h·V_h).
// E is one parameter shared by every layer; each layer's state_dict holds it as `attn.E`. Per head the
// compression is a batched MatMul of E [h, k, N] and the split tokens [B, h, N, d].
Status emit_linformer_lra(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out) {
  const std::string& p = site.prefix;
  const int64_t c = site.dim;
  VITRT_RETURN_IF_ERROR(check_heads(site, c, p + ".W_q.weight"));
  const std::string key = p + ".attn.E";
  const auto es = b.shape_of(key);
  if (es.size() != 3 || es[0] != site.heads || es[1] < 1 || es[2] < site.tokens)
    return bad_input("Linformer (LRA): '" + key +
                     "' must be [h, k, L] with h = " + std::to_string(site.heads) +
                     " heads (pass --heads) and L >= the model's " + std::to_string(site.tokens) + " tokens");
  const int64_t h = es[0], k_len = es[1], trained = es[2], n = site.tokens, d = c / site.heads;
  int32_t e = -1;
  if (trained == n) {
    e = b.weight(key, es);
  } else {  // E[:, :, :N]
    if (!b.can_generate(key, h * k_len, n)) return Status::Ok();
    const std::vector<float>& src = b.float_values(key);
    b.ignore(key);
    if (static_cast<int64_t>(src.size()) != h * k_len * trained) return Status::Ok();  // recorded
    std::vector<float> dst(static_cast<size_t>(h * k_len * n));
    for (int64_t r = 0; r < h * k_len; ++r)
      for (int64_t t = 0; t < n; ++t) dst[r * n + t] = src[r * trained + t];
    e = b.constant(key + "[:,:,:N]", Shape{h, k_len, n}, std::move(dst));
  }
  // [B,N,C] -> heads [B,h,N,d] -> E·(each head) [B,h,k,d] -> [B,k,C]
  auto compress_heads = [&](int32_t t, const std::string& name) {
    t = b.op(OpType::kReshape, ReshapeAttrs{{0, 0, h, d}}, {t}, name + ".heads");
    t = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {t}, name + ".split");
    t = b.op(OpType::kMatMul, NoAttrs{}, {e, t}, name);
    t = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {t}, name + ".merge");
    return b.op(OpType::kReshape, ReshapeAttrs{{0, 0, c}}, {t}, name + ".tokens");
  };
  const int32_t q = linear(b, x, p + ".W_q", c, c);
  const int32_t k = compress_heads(linear(b, x, p + ".W_k", c, c), p + ".attn.E_k");
  const int32_t v = compress_heads(linear(b, x, p + ".W_v", c, c), p + ".attn.E_v");
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const int32_t o = b.op(OpType::kSoftmaxAttention,
                         SoftmaxAttentionAttrs{site.heads, scale, AttentionInputs::kSeparate}, {q, k, v}, p);
  *out = linear(b, o, p + ".ff", c, c);
  return Status::Ok();
}

}  // namespace vitrt::convert
