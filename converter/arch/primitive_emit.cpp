// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The primitive forms, op for op as the PyTorch reference modules compute them
// (tools/reference/vitrt_reference, docs/models.md §4.2 and §5.1). The batch axis stays dynamic: reshapes
// copy it (0) or infer it (-1).
#include "arch/primitive_emit.h"

#include <cmath>

namespace vitrt::convert {
namespace {

int32_t reshape(GraphBuilder& b, int32_t x, std::vector<int64_t> shape, const std::string& name) {
  return b.op(OpType::kReshape, ReshapeAttrs{std::move(shape)}, {x}, name);
}
int32_t transpose(GraphBuilder& b, int32_t x, std::vector<int32_t> perm, const std::string& name) {
  return b.op(OpType::kTranspose, TransposeAttrs{std::move(perm)}, {x}, name);
}

// x [B,N,C] -> [B,h,N,d]: x.reshape(B,N,h,d).permute(0,2,1,3)
int32_t split_heads(GraphBuilder& b, int32_t x, int64_t h, const std::string& name) {
  const int64_t d = b.shape(x)[2] / h;
  return transpose(b, reshape(b, x, {0, 0, h, d}, name + ".reshape"), {0, 2, 1, 3}, name + ".permute");
}

// x [B,N,p*C] -> p tensors [B,h,N,d]: x.reshape(B,N,p,h,d).permute(2,0,3,1,4).unbind(0)
std::vector<int32_t> unbind_heads(GraphBuilder& b, int32_t x, int64_t parts, int64_t h,
                                  const std::string& name) {
  const int64_t n = b.shape(x)[1], d = b.shape(x)[2] / parts / h;
  const int32_t t =
      transpose(b, reshape(b, x, {0, 0, parts, h, d}, name + ".reshape"), {2, 0, 3, 1, 4}, name + ".permute");
  std::vector<int32_t> out;
  for (int64_t p = 0; p < parts; ++p) {
    const std::string np = name + ".unbind" + std::to_string(p);
    const int32_t s = b.op(OpType::kSlice, SliceAttrs{0, p, p + 1}, {t}, np + ".slice");
    out.push_back(reshape(b, s, {-1, h, n, d}, np));
  }
  return out;
}

// (p @ v) [B,h,N,d] -> [B,N,C]: .transpose(1,2).reshape(B,N,C)
// The last op carries the fused op's node name and output name, so a fused plan names things alike either
// way.
int32_t merge_heads(GraphBuilder& b, int32_t o, const std::string& name, const std::string& out_name) {
  const int64_t c = b.shape(o)[1] * b.shape(o)[3];
  const int32_t t = transpose(b, o, {0, 2, 1, 3}, name + ".merge.permute");
  return b.op_outputs(OpType::kReshape, ReshapeAttrs{{0, 0, c}}, {t}, name, {out_name})[0];
}

// softmax(s, -1) @ v, merged back to [B,N,C].
int32_t softmax_times_v(GraphBuilder& b, int32_t s, int32_t v, const std::string& name,
                        const std::string& out_name) {
  const int32_t p = b.op(OpType::kSoftmax, SoftmaxAttrs{-1}, {s}, name + ".softmax");
  const int32_t o = b.op(OpType::kMatMul, NoAttrs{}, {p, v}, name + ".pv");
  return merge_heads(b, o, name, out_name);
}

std::vector<int32_t> softmax_attention(GraphBuilder& b, const SoftmaxAttentionAttrs& a,
                                       const std::vector<int32_t>& in, const std::string& name,
                                       const std::vector<std::string>& out_names) {
  const int64_t h = a.num_heads;
  int32_t q, k, v;
  size_t next = 0;
  if (a.inputs == AttentionInputs::kQkvPacked) {
    const auto qkv = unbind_heads(b, in[next++], 3, h, name + ".qkv");
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else if (a.inputs == AttentionInputs::kQKvPacked) {
    q = split_heads(b, in[next++], h, name + ".q");
    const auto kv = unbind_heads(b, in[next++], 2, h, name + ".kv");
    k = kv[0], v = kv[1];
  } else {
    q = split_heads(b, in[next++], h, name + ".q");
    k = split_heads(b, in[next++], h, name + ".k");
    v = split_heads(b, in[next++], h, name + ".v");
  }
  const int32_t kt = transpose(b, k, {0, 1, 3, 2}, name + ".k.transpose");
  int32_t s = b.op(OpType::kMatMul, NoAttrs{}, {q, kt}, name + ".qk");
  const int32_t scale = b.constant(name + ".scale", Shape{1}, {a.scale});
  const bool bias = next < in.size() && in[next] != kAbsent;
  const std::string scores_name = out_names.size() > 1 ? out_names[1] : name + ".scores";
  s = b.op(OpType::kMul, NoAttrs{}, {s, scale}, bias ? name + ".scaled" : scores_name);
  if (bias) s = b.op(OpType::kAdd, NoAttrs{}, {s, in[next]}, scores_name);
  std::vector<int32_t> out = {softmax_times_v(b, s, v, name, out_names[0])};
  if (out_names.size() > 1) out.push_back(s);
  return out;
}

// LaViT LA: S = psi(theta(S_prev)ᵀ)ᵀ, softmax(S) @ v.
std::vector<int32_t> reused_attention(GraphBuilder& b, const ReusedAttentionAttrs& a,
                                      const std::vector<int32_t>& in, const std::string& name,
                                      const std::vector<std::string>& out_names) {
  int32_t s = b.op(OpType::kLinear, LinearAttrs{}, {in[0], in[2], in[3]}, name + ".theta");
  s = transpose(b, s, {0, 1, 3, 2}, name + ".theta.transpose");
  s = b.op(OpType::kLinear, LinearAttrs{}, {s, in[4], in[5]}, name + ".psi");
  s = transpose(b, s, {0, 1, 3, 2}, out_names.size() > 1 ? out_names[1] : name + ".scores");
  const int32_t v = split_heads(b, in[1], a.num_heads, name + ".v");
  std::vector<int32_t> out = {softmax_times_v(b, s, v, name, out_names[0])};
  if (out_names.size() > 1) out.push_back(s);
  return out;
}

// LaViT AR: scores [B,h1,N1,N'] -> gamma · pw(dw(scores as B·N' images of h1 channels)) [B,h2,N2,N'].
int32_t attention_residual(GraphBuilder& b, const AttentionResidualAttrs& a, const std::vector<int32_t>& in,
                           const std::string& name, const std::string& out_name) {
  const Shape& s = b.shape(in[0]);
  const Shape& dw = b.shape(in[1]);
  const int64_t h1 = s[1], nk = s[3], h2 = b.shape(in[3])[0];
  const int32_t k = static_cast<int32_t>(dw[2]);
  int32_t x = transpose(b, in[0], {0, 3, 1, 2}, name + ".permute");
  x = reshape(b, x, {-1, h1, a.height, a.width}, name + ".images");
  Conv2dAttrs dwa;
  dwa.stride_h = dwa.stride_w = k;
  dwa.groups = static_cast<int32_t>(h1);
  x = b.op(OpType::kConv2d, dwa, {x, in[1], in[2]}, name + ".dw");
  x = b.op(OpType::kConv2d, Conv2dAttrs{}, {x, in[3], in[4]}, name + ".pw");
  const int64_t n2 = b.shape(x)[2] * b.shape(x)[3];
  x = reshape(b, x, {-1, nk, h2, n2}, name + ".tokens");
  x = transpose(b, x, {0, 2, 3, 1}, name + ".unpermute");
  const int32_t gamma = reshape(b, in[5], {h2, 1, 1}, name + ".gamma.view");
  return b.op_outputs(OpType::kMul, NoAttrs{}, {x, gamma}, name, {out_name})[0];
}

// SOFT (scaled Newton, docs/models.md §3.4-3.5a), as tools/reference/vitrt_reference/soft.py computes it; the
// Gaussian distance in its broadcast form sum_c (q - l)^2 (the reference sums the same terms channel by
// channel).
int32_t linear_attention(GraphBuilder& b, const LinearAttentionAttrs& a, const std::vector<int32_t>& in,
                         const std::string& name, const std::string& out_name) {
  const int64_t h = a.num_heads, c = b.shape(in[0])[2], d = c / h, hh = a.height, ww = a.width;
  const int64_t r = a.landmark_ratio, m = (hh / r) * (ww / r), k = b.shape(in[5])[2];
  auto mul = [&](int32_t x, int32_t y, const std::string& n) {
    return b.op(OpType::kMul, NoAttrs{}, {x, y}, n);
  };
  auto scalar = [&](const std::string& n, float v) { return b.constant(name + "." + n, Shape{1}, {v}); };
  const int32_t q =
      mul(split_heads(b, in[0], h, name + ".q"), scalar("q_scale", a.q_scale), name + ".q.scaled");
  // landmarks: conv r x r stride r over each head's [d,H,W] image, LayerNorm(d), erf GELU -> [B,h,m,d]
  int32_t l = transpose(b, reshape(b, q, {-1, hh, ww, d}, name + ".landmarks.image"), {0, 3, 1, 2},
                        name + ".landmarks.chw");
  Conv2dAttrs lc;
  lc.stride_h = lc.stride_w = static_cast<int32_t>(r);
  l = b.op(OpType::kConv2d, lc, {l, in[2], kAbsent}, name + ".landmarks.conv");
  l = reshape(b, l, {0, 0, -1}, name + ".landmarks.flatten");
  l = transpose(b, l, {0, 2, 1}, name + ".landmarks.tokens");
  l = reshape(b, l, {-1, h, m, d}, name + ".landmarks.heads");
  l = b.op(OpType::kLayerNorm, LayerNormAttrs{a.landmark_ln_eps}, {l, in[3], in[4]},
           name + ".landmarks.norm");
  l = b.op(OpType::kGelu, GeluAttrs{GeluApproximation::kErf}, {l}, name + ".landmarks");
  // K1 = exp(-|q_i - l_j|^2 / 2), K2 = exp(-|l_i - l_j|^2 / 2)
  const int32_t neg_half = scalar("neg_half", -0.5f);
  const int32_t keys = reshape(b, l, {0, 0, 1, m, d}, name + ".landmarks.keys");
  auto gaussian = [&](int32_t rows, const std::string& n) {
    const int32_t diff = b.op(OpType::kSub, NoAttrs{}, {rows, keys}, n + ".diff");
    int32_t dist = b.op(OpType::kReduceSum, ReduceMeanAttrs{{-1}, false}, {mul(diff, diff, n + ".square")},
                        n + ".distance");
    return b.op(OpType::kExp, NoAttrs{}, {mul(dist, neg_half, n + ".exponent")}, n);
  };
  const int32_t k1 = gaussian(reshape(b, q, {0, 0, 0, 1, d}, name + ".q.rows"), name + ".kernel1");
  const int32_t k2 = gaussian(reshape(b, l, {0, 0, 0, 1, d}, name + ".landmarks.rows"), name + ".kernel2");
  // Newton: alpha = 1.8 / max_i(sum_j K2)^2 per (b,h); P = K2 + reg I; V = alpha P; V <- 2V - (V P) V
  int32_t mx = b.op(OpType::kReduceSum, ReduceMeanAttrs{{-1}, true}, {k2}, name + ".pinv.rowsum");
  mx = b.op(OpType::kReduceMax, ReduceMeanAttrs{{-2}, true}, {mx}, name + ".pinv.maxrow");
  const int32_t alpha = b.op(OpType::kDiv, NoAttrs{},
                             {scalar("pinv.alpha_num", 0.9f * 2.0f), mul(mx, mx, name + ".pinv.maxrow2")},
                             name + ".pinv.alpha");
  const bool eye_ok = b.can_generate(name + ".pinv.reg_eye", m, m);  // else the graph never finishes
  std::vector<float> eye(eye_ok ? static_cast<size_t>(m * m) : 0, 0.0f);
  for (int64_t i = 0; eye_ok && i < m; ++i) eye[static_cast<size_t>(i * m + i)] = a.newton_regularizer;
  const int32_t p = b.op(OpType::kAdd, NoAttrs{}, {k2, b.constant(name + ".pinv.reg_eye", Shape{m, m}, eye)},
                         name + ".pinv.p");
  int32_t v = mul(alpha, p, name + ".pinv.v0");
  const int32_t two = scalar("pinv.two", 2.0f);
  for (int32_t i = 0; i < a.newton_iterations; ++i) {
    const std::string n = name + ".pinv.iter" + std::to_string(i);
    const int32_t vp = b.op(OpType::kMatMul, NoAttrs{}, {v, p}, n + ".vp");
    const int32_t vpv = b.op(OpType::kMatMul, NoAttrs{}, {vp, v}, n + ".vpv");
    v = b.op(OpType::kSub, NoAttrs{}, {mul(v, two, n + ".2v"), vpv}, n);
  }
  // X = (K1 @ K2inv) @ (K1ᵀ @ V) + depthwise k x k conv of V (one kernel per head, shared by its d channels)
  const int32_t vh = split_heads(b, in[1], h, name + ".v");
  const int32_t k3 = transpose(b, k1, {0, 1, 3, 2}, name + ".kernel3");
  const int32_t left = b.op(OpType::kMatMul, NoAttrs{}, {k1, v}, name + ".k1_k2inv");
  const int32_t right = b.op(OpType::kMatMul, NoAttrs{}, {k3, vh}, name + ".k3_v");
  const int32_t x = b.op(OpType::kMatMul, NoAttrs{}, {left, right}, name + ".product");
  int32_t vc = transpose(b, reshape(b, vh, {0, 0, hh, ww, d}, name + ".v_conv.grid"), {0, 4, 1, 2, 3},
                         name + ".v_conv.permute");
  vc = reshape(b, vc, {-1, h, hh, ww}, name + ".v_conv.image");
  Conv2dAttrs dw;
  dw.pad_h = dw.pad_w = static_cast<int32_t>(k / 2);
  dw.groups = static_cast<int32_t>(h);
  vc = b.op(OpType::kConv2d, dw, {vc, in[5], kAbsent}, name + ".v_conv");
  vc = transpose(b, reshape(b, vc, {-1, d, h, hh * ww}, name + ".v_conv.tokens"), {0, 2, 3, 1},
                 name + ".v_conv.heads");
  return merge_heads(b, b.op(OpType::kAdd, NoAttrs{}, {x, vc}, name + ".sum"), name, out_name);
}

// Performer (PerformerAttention, docs/linear_attention.md "Performer") as torch.onnx.export writes
// tools/reference/vitrt_reference/attn_performer.py once the importer has lowered it (each Einsum as
// Transpose / Reshape / MatMul, x² as x·x, 1/x as 1 ÷ x): the form fuse_performer_attention recognises.
int32_t performer_attention(GraphBuilder& b, const PerformerAttentionAttrs& a, const std::vector<int32_t>& in,
                            const std::string& name, const std::string& out_name) {
  const int64_t h = a.heads, c = b.shape(in[0])[2], d = c / h, m = b.shape(in[3])[0];
  // The scalars as PyTorch rounds them (Python doubles applied as float; the kernels' performer_scalars).
  const double dn = std::pow(static_cast<double>(d), -0.25);
  const float dn_f = static_cast<float>(dn), dn_sq = static_cast<float>(dn * dn);
  const float ratio = static_cast<float>(std::pow(static_cast<double>(m), -0.5));
  auto op2 = [&](OpType t, int32_t x, int32_t y, const std::string& n) {
    return b.op(t, NoAttrs{}, {x, y}, name + "." + n);
  };
  auto scalar = [&](const std::string& n, float v) { return b.constant(name + "." + n, Shape{1}, {v}); };
  auto reduce = [&](OpType t, int32_t x, std::vector<int32_t> axes, bool keep, const std::string& n) {
    return b.op(t, ReduceMeanAttrs{std::move(axes), keep}, {x}, name + "." + n);
  };
  const int32_t q = split_heads(b, in[0], h, name + ".q"), k = split_heads(b, in[1], h, name + ".k");
  const int32_t v = split_heads(b, in[2], h, name + ".v");
  // φ(x) [B,h,N,m] of heads x [B,h,N,d]
  auto features = [&](int32_t x, const std::string& p, bool query) {
    const int32_t rows = reshape(b, op2(OpType::kMul, x, scalar(p + ".dn", dn_f), p + ".scaled"), {-1, d},
                                 name + "." + p + ".rows");
    const int32_t w_t = transpose(b, in[3], {1, 0}, name + "." + p + ".projection_t");
    const int64_t n = b.shape(x)[2];
    const int32_t u =
        reshape(b, op2(OpType::kMatMul, rows, w_t, p + ".u_rows"), {-1, h, n, m}, name + "." + p + ".u");
    if (a.kernel == PerformerKernel::kGeneralized)
      return op2(OpType::kAdd, b.op(OpType::kRelu, NoAttrs{}, {u}, name + "." + p + ".relu"),
                 scalar(p + ".eps", 1e-3f), p + ".phi");
    int32_t g =
        reduce(OpType::kReduceSum, op2(OpType::kMul, x, x, p + ".square"), {-1}, false, p + ".sum_sq");
    g = op2(OpType::kMul, op2(OpType::kMul, g, scalar(p + ".half", 0.5f), p + ".half_sq"),
            scalar(p + ".dn_sq", dn_sq), p + ".g_rows");
    g = reshape(b, g, {0, 0, 0, 1}, name + "." + p + ".g");
    const int32_t max = query ? reduce(OpType::kReduceMax, u, {-1}, true, p + ".max")
                        : a.key_max == PerformerKeyMax::kGlobal
                            ? reduce(OpType::kReduceMax, u, {0, 1, 2, 3}, false, p + ".max")
                            : reduce(OpType::kReduceMax, u, {-1, -2}, true, p + ".max");
    int32_t e = op2(OpType::kSub, op2(OpType::kSub, u, g, p + ".centred"), max, p + ".shifted");
    e = op2(OpType::kAdd, b.op(OpType::kExp, NoAttrs{}, {e}, name + "." + p + ".exp"),
            scalar(p + ".eps", 1e-4f), p + ".exp_eps");
    return op2(OpType::kMul, e, scalar(p + ".ratio", ratio), p + ".phi");
  };
  const int32_t qf = features(q, "q", true), kf = features(k, "k", false);
  const int32_t k_sum =
      reshape(b, reduce(OpType::kReduceSum, kf, {-2}, false, "k_sum"), {0, 0, 0, 1}, name + ".k_sum.col");
  const int32_t denom = reshape(b, op2(OpType::kMatMul, qf, k_sum, "denom.col"), {0, 0, 0}, name + ".denom");
  const int32_t d_inv = op2(OpType::kDiv, scalar("one", 1.0f), denom, "d_inv");
  const int32_t context =
      op2(OpType::kMatMul, transpose(b, kf, {0, 1, 3, 2}, name + ".k.phi_t"), v, "context");
  const int32_t product_t = op2(OpType::kMatMul, transpose(b, context, {0, 1, 3, 2}, name + ".context_t"),
                                transpose(b, qf, {0, 1, 3, 2}, name + ".q.phi_t"), "product_t");
  const int32_t o = op2(OpType::kMul, transpose(b, product_t, {0, 1, 3, 2}, name + ".product"),
                        reshape(b, d_inv, {0, 0, 0, 1}, name + ".d_inv.col"), "attended");
  return merge_heads(b, o, name, out_name);
}

// Nyströmformer (NystromAttention, docs/linear_attention.md "Nyströmformer") as torch.onnx.export writes the
// official module (tools/reference/vitrt_reference/attn_nystrom.py) once imported, with the scales applied as
// multiplications by the op's own q_scale and k_scale: the form fuse_nystrom_attention recognises, so the
// fused op it restores has the very attributes written here.
int32_t nystrom_attention(GraphBuilder& b, const NystromAttentionAttrs& a, const std::vector<int32_t>& in,
                          const std::string& name, const std::string& out_name) {
  const int64_t h = a.num_heads, n = b.shape(in[0])[1], c = b.shape(in[0])[2], d = c / h, m = a.landmarks;
  auto op2 = [&](OpType t, int32_t x, int32_t y, const std::string& s) {
    return b.op(t, NoAttrs{}, {x, y}, name + "." + s);
  };
  auto scalar = [&](const std::string& s, float v) { return b.constant(name + "." + s, Shape{1}, {v}); };
  auto reduce = [&](OpType t, int32_t x, std::vector<int32_t> axes, const std::string& s) {
    return b.op(t, ReduceMeanAttrs{std::move(axes), false}, {x}, name + "." + s);
  };
  auto t_last = [&](int32_t x, const std::string& s) {
    return transpose(b, x, {0, 1, 3, 2}, name + "." + s);
  };
  // Q = (x.reshape(B,N,h,d).transpose(1,2))·scale; without a k scale (T2T-ViT) kᵀ transposes the split keys.
  const int32_t q =
      op2(OpType::kMul, split_heads(b, in[0], h, name + ".q"), scalar("q_scale", a.q_scale), "q");
  int32_t k = split_heads(b, in[1], h, name + ".k");
  if (a.k_scale != 1.0f) k = op2(OpType::kMul, k, scalar("k_scale", a.k_scale), "k");
  const int32_t v = split_heads(b, in[2], h, name + ".v");
  // Segment means along the tokens: one reshape and mean when m divides N, else the T2T rule's two sizes.
  auto landmarks = [&](int32_t x, const std::string& s) {
    const int64_t segs = n / m;
    if (n % m == 0)
      return reduce(OpType::kReduceMean, reshape(b, x, {0, 0, m, segs, d}, name + "." + s + ".r"), {-2}, s);
    const int64_t small = (segs + 1) * m - n;
    auto part = [&](int64_t start, int64_t end, int64_t count, int64_t len, const std::string& p) {
      const int32_t sl = b.op(OpType::kSlice, SliceAttrs{2, start, end}, {x}, name + "." + s + p + ".s");
      return reduce(OpType::kReduceMean, reshape(b, sl, {0, 0, count, len, d}, name + "." + s + p + ".r"),
                    {-2}, s + p);
    };
    return b.op(OpType::kConcat, ConcatAttrs{2},
                {part(0, small * segs, small, segs, ".a"), part(small * segs, n, m - small, segs + 1, ".b")},
                name + "." + s);
  };
  const int32_t ql = landmarks(q, "q_landmarks"), kl = landmarks(k, "k_landmarks");
  const int32_t klt = t_last(kl, "k_landmarks_t");
  auto softmax = [&](int32_t x, int32_t y, const std::string& s) {
    return b.op(OpType::kSoftmax, SoftmaxAttrs{-1}, {op2(OpType::kMatMul, x, y, s + ".scores")},
                name + "." + s);
  };
  const int32_t k1 = softmax(q, klt, "kernel_1"), k2 = softmax(ql, klt, "kernel_2"),
                k3 = softmax(ql, t_last(k, "k_t"), "kernel_3");
  // Z0 = k2ᵀ / (max column sum): one max over everything ("original") or per (b, h), unsqueezed twice.
  int32_t top = reduce(OpType::kReduceSum, k2, {-2}, "inv.colsum");
  if (a.init == NystromInit::kPerHead) {
    top = reduce(OpType::kReduceMax, top, {-1}, "inv.max");
    top = reshape(b, reshape(b, top, {0, 0, 1}, name + ".inv.max.u1"), {0, 0, 0, 1}, name + ".inv.max.u2");
  } else {
    top = reduce(OpType::kReduceMax, top, {0, 1, 2}, "inv.max");
  }
  int32_t z = op2(OpType::kMul, op2(OpType::kDiv, scalar("inv.one", 1.0f), top, "inv.recip"),
                  t_last(k2, "kernel_2_t"), "inv.z0");
  const bool eye_ok = b.can_generate(name + ".inv.eye", m, m);  // else the graph never finishes
  auto eye = [&](float value) {
    std::vector<float> e(eye_ok ? static_cast<size_t>(m * m) : 0, 0.0f);
    for (int64_t i = 0; eye_ok && i < m; ++i) e[static_cast<size_t>(i * m + i)] = value;
    return b.constant(name + ".inv.eye" + std::to_string(static_cast<int>(value)), Shape{m, m}, std::move(e));
  };
  const int32_t eye7 = eye(7.0f), eye13 = eye(13.0f), eye15 = eye(15.0f),
                quarter = scalar("inv.quarter", 0.25f);
  for (int32_t i = 0; i < a.iterations; ++i) {
    const std::string s = "inv.iter" + std::to_string(i);
    const int32_t kv = op2(OpType::kMatMul, k2, z, s + ".kv");
    int32_t t = op2(OpType::kMatMul, kv, op2(OpType::kSub, eye7, kv, s + ".a"), s + ".b");
    t = op2(OpType::kMatMul, kv, op2(OpType::kSub, eye15, t, s + ".c"), s + ".e");
    z = op2(OpType::kMatMul, op2(OpType::kMul, z, quarter, s + ".zq"), op2(OpType::kSub, eye13, t, s + ".f"),
            s);
  }
  int32_t x = op2(OpType::kMatMul, op2(OpType::kMatMul, k1, z, "left"), op2(OpType::kMatMul, k3, v, "right"),
                  "product");
  if (in.size() > 3 && in[3] != kAbsent) {  // Conv2d(h, h, (ks,1), padding (ks//2,0), groups=h) of V
    Conv2dAttrs dw;
    dw.pad_h = static_cast<int32_t>(b.shape(in[3])[2] / 2);
    dw.groups = static_cast<int32_t>(h);
    x = op2(OpType::kAdd, x, b.op(OpType::kConv2d, dw, {v, in[3], kAbsent}, name + ".v_conv"), "sum");
  }
  return merge_heads(b, x, name, out_name);
}

}  // namespace

bool emit_primitive(GraphBuilder& b, OpType type, const OpAttrs& attrs, const std::vector<int32_t>& inputs,
                    const std::string& name, const std::vector<std::string>& output_names,
                    std::vector<int32_t>* outputs) {
  switch (type) {
    case OpType::kSoftmaxAttention:
      *outputs = softmax_attention(b, std::get<SoftmaxAttentionAttrs>(attrs), inputs, name, output_names);
      return true;
    case OpType::kReusedAttention:
      *outputs = reused_attention(b, std::get<ReusedAttentionAttrs>(attrs), inputs, name, output_names);
      return true;
    case OpType::kAttentionResidual:
      *outputs = {
          attention_residual(b, std::get<AttentionResidualAttrs>(attrs), inputs, name, output_names[0])};
      return true;
    case OpType::kLinearAttention: {
      // Only the current SOFT kernel: the legacy inverse (SOFT-Norm) backtracks on a data-dependent loop,
      // which plain ops cannot express, so SOFT-Norm's LinearAttention keeps its fused form.
      const auto& a = std::get<LinearAttentionAttrs>(attrs);
      if (a.pinv != PseudoInverse::kNewtonScaled || a.symmetric_normalization) return false;
      *outputs = {linear_attention(b, a, inputs, name, output_names[0])};
      return true;
    }
    case OpType::kPerformerAttention:
      *outputs = {
          performer_attention(b, std::get<PerformerAttentionAttrs>(attrs), inputs, name, output_names[0])};
      return true;
    case OpType::kNystromAttention:
      *outputs = {
          nystrom_attention(b, std::get<NystromAttentionAttrs>(attrs), inputs, name, output_names[0])};
      return true;
    default:
      return false;
  }
}

}  // namespace vitrt::convert
