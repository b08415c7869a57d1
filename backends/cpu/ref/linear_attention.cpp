// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LinearAttention: SOFT's softmax-free attention (docs/models.md §3.4–3.6), step by step as the PyTorch code
// does it. For each batch item b and head h (channels c = h·d + j):
//   Q  = q·q_scale                                     [N,d]   (K is tied to Q)
//   L  = GELU_erf(LN_d(conv_{r×r, stride r}(Q as a [d,H,W] image)))   [m,d], m = ⌊H/r⌋·⌊W/r⌋,
//        the conv weights shared by all heads
//   K1 = exp(−Σ_c (Q_i − L_j)²/2)                      [N,m]   (direct difference form)
//   K2 = exp(−Σ_c (L_i − L_j)²/2)                      [m,m]
//   K2⁺ = the Newton–Raphson pseudo-inverse named by the attributes (newton_inverse.h), optionally
//        symmetrically normalised: K2⁺[i][j]·d_i·d_j with d = 1/sqrt(row sums of K2)   (SOFT-Norm)
//   X  = (K1·K2⁺)·(K1ᵀ·V) + depthwise_conv_{k×k}(V)    [N,d]   (one kernel per head, shared by its d
//   channels)
// and the heads merged head-major into [B,N,C].
//
// The pseudo-inverse is never a direct inverse or solve: the models were trained with 20 Newton iterations,
// which do not converge when K2 is ill-conditioned, so the partially converged iterate is part of the model.
// kNewtonLegacy takes its step size over the whole batch, so all of the batch's K2 are built (phase 1) before
// any is inverted (phase 2) and used (phase 3).
//
// Matrix products accumulate in float, as PyTorch's float32 matmuls do; the landmark LayerNorm takes its
// statistics in double like the reference LayerNorm kernel. All scratch lives in the plan-time workspace:
//   landmarks [B,h,m,d], K2 [B,h,m,m], K2⁺ [B,h,m,m], Newton scratch 3m², and per (b,h): Q [N,d], K1 [N,m],
//   K1·K2⁺ [N,m], K1ᵀ·V [m,d], d [m].
#include <cmath>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/newton_inverse.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/operand_check.h"
#include "ops/linear_attention_geometry.h"

namespace vitrt {
namespace ref {
namespace {

using Dims = LinearAttentionGeometry;

struct Layout {
  int64_t landmarks, k2, inv, newton, q, k1, a, kv, dsym, total;
};

Layout layout_of(const Dims& s) {
  Layout l{};
  int64_t off = 0;
  auto take = [&](int64_t floats) {
    const int64_t at = off;
    off += (floats + 15) / 16 * 16;  // keep every region 64-byte aligned
    return at;
  };
  const int64_t bh = s.batch * s.heads;
  l.landmarks = take(bh * s.m * s.d);
  l.k2 = take(bh * s.m * s.m);
  l.inv = take(bh * s.m * s.m);
  l.newton = take(newton_workspace_floats(s.m));
  l.q = take(s.n * s.d);
  l.k1 = take(s.n * s.m);
  l.a = take(s.n * s.m);
  l.kv = take(s.m * s.d);
  l.dsym = take(s.m);
  l.total = off;
  return l;
}

class LinearAttentionKernel final : public RefKernel {
 public:
  LinearAttentionKernel(const KernelPlan& plan, const LinearAttentionAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    Dims s;
    const Status decoded = decode_linear_attention_geometry(a_, shapes, args.num_src, &s);
    if (!decoded.ok()) return fail(decoded.message());
    const Layout l = layout_of(s);
    VITRT_RETURN_IF_ERROR(check_workspace(args, l.total));
    float* ws = static_cast<float*>(args.workspace);
    const float* q = args.src[0]->f32();
    const float* v = args.src[1]->f32();
    const float* lw = args.src[2]->f32();
    const float* ln_g = args.src[3]->f32();
    const float* ln_b = args.src[4]->f32();
    const float* vw = args.src[5]->f32();
    float* out = args.dst[0]->f32();
    const int64_t mm = s.m * s.m;

    // Phase 1: landmarks and K2 of every (b, h).
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t h = 0; h < s.heads; ++h) {
        const int64_t bh = b * s.heads + h;
        float* qh = ws + l.q;
        scaled_q(q, s, b, h, qh);
        float* lm = ws + l.landmarks + bh * s.m * s.d;
        landmarks(qh, lw, ln_g, ln_b, s, lm);
        gaussian(lm, s.m, lm, s.m, s.d, ws + l.k2 + bh * mm);
      }
    }

    // Phase 2: the pseudo-inverses.
    float* k2 = ws + l.k2;
    float* inv = ws + l.inv;
    float* newton = ws + l.newton;
    if (a_.pinv == PseudoInverse::kNewtonLegacy) {
      newton_inverse_legacy(k2, s.batch * s.heads, s.m, a_.newton_iterations, inv, newton);
    } else {
      for (int64_t bh = 0; bh < s.batch * s.heads; ++bh)
        newton_inverse_scaled(k2 + bh * mm, s.m, a_.newton_iterations, a_.newton_regularizer, inv + bh * mm,
                              newton);
    }

    // Phase 3: X = (K1·K2⁺)·(K1ᵀ·V) + V conv, per (b, h).
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t h = 0; h < s.heads; ++h) {
        const int64_t bh = b * s.heads + h;
        float* qh = ws + l.q;
        float* k1 = ws + l.k1;
        float* ak = ws + l.a;
        float* kv = ws + l.kv;
        float* kinv = inv + bh * mm;
        scaled_q(q, s, b, h, qh);
        gaussian(qh, s.n, ws + l.landmarks + bh * s.m * s.d, s.m, s.d, k1);
        if (a_.symmetric_normalization) {
          // D_sym = 1 / sqrt(K2.sum(-1)); inv = D_sym * inv * D_sym^T.
          const float* k2b = k2 + bh * mm;
          float* dsym = ws + l.dsym;
          for (int64_t i = 0; i < s.m; ++i) {
            float sum = 0.0f;
            for (int64_t j = 0; j < s.m; ++j) sum += k2b[i * s.m + j];
            dsym[i] = 1.0f / std::sqrt(sum);
          }
          for (int64_t i = 0; i < s.m; ++i)
            for (int64_t j = 0; j < s.m; ++j) kinv[i * s.m + j] = dsym[i] * kinv[i * s.m + j] * dsym[j];
        }
        // ak[N,m] = K1 · K2⁺
        for (int64_t i = 0; i < s.n; ++i) {
          float* row = ak + i * s.m;
          for (int64_t j = 0; j < s.m; ++j) row[j] = 0.0f;
          const float* k1i = k1 + i * s.m;
          for (int64_t t = 0; t < s.m; ++t) {
            const float w = k1i[t];
            const float* ir = kinv + t * s.m;
            for (int64_t j = 0; j < s.m; ++j) row[j] += w * ir[j];
          }
        }
        // kv[m,d] = K1ᵀ · V
        for (int64_t i = 0; i < s.m * s.d; ++i) kv[i] = 0.0f;
        const float* vb = v + b * s.n * s.c + h * s.d;
        for (int64_t t = 0; t < s.n; ++t) {
          const float* vt = vb + t * s.c;
          const float* k1t = k1 + t * s.m;
          for (int64_t p = 0; p < s.m; ++p) {
            const float w = k1t[p];
            float* kvp = kv + p * s.d;
            for (int64_t j = 0; j < s.d; ++j) kvp[j] += w * vt[j];
          }
        }
        // out[b, i, h·d + j] = Σ_p ak[i][p] · kv[p][j], then + the V conv.
        float* ob = out + b * s.n * s.c + h * s.d;
        for (int64_t i = 0; i < s.n; ++i) {
          float* oi = ob + i * s.c;
          for (int64_t j = 0; j < s.d; ++j) oi[j] = 0.0f;
          const float* ai = ak + i * s.m;
          for (int64_t p = 0; p < s.m; ++p) {
            const float w = ai[p];
            const float* kvp = kv + p * s.d;
            for (int64_t j = 0; j < s.d; ++j) oi[j] += w * kvp[j];
          }
        }
        add_v_conv(vb, vw + h * s.k * s.k, s, ob);
      }
    }
    return Status::Ok();
  }

 private:
  // qh[N,d] = q[b, :, h·d : (h+1)·d] · q_scale
  void scaled_q(const float* q, const Dims& s, int64_t b, int64_t h, float* qh) const {
    const float scale = a_.q_scale;
    const float* qb = q + b * s.n * s.c + h * s.d;
    for (int64_t i = 0; i < s.n; ++i)
      for (int64_t j = 0; j < s.d; ++j) qh[i * s.d + j] = qb[i * s.c + j] * scale;
  }

  // lm[m,d]: the r×r stride-r conv (no bias) over qh viewed as a [d,H,W] image, then LayerNorm(d) and erf
  // GELU.
  void landmarks(const float* qh, const float* lw, const float* g, const float* beta, const Dims& s,
                 float* lm) const {
    const int64_t r = s.r, d = s.d;
    for (int64_t y = 0; y < s.m_h; ++y) {
      for (int64_t x = 0; x < s.m_w; ++x) {
        float* lp = lm + (y * s.m_w + x) * d;
        for (int64_t o = 0; o < d; ++o) {
          const float* wo = lw + o * d * r * r;  // [c][ky][kx]
          float acc = 0.0f;
          for (int64_t c = 0; c < d; ++c)
            for (int64_t ky = 0; ky < r; ++ky)
              for (int64_t kx = 0; kx < r; ++kx)
                acc += wo[(c * r + ky) * r + kx] * qh[((y * r + ky) * s.width + x * r + kx) * d + c];
          lp[o] = acc;
        }
        double mean = 0.0;
        for (int64_t c = 0; c < d; ++c) mean += lp[c];
        mean /= static_cast<double>(d);
        double var = 0.0;
        for (int64_t c = 0; c < d; ++c) {
          const double dv = lp[c] - mean;
          var += dv * dv;
        }
        var /= static_cast<double>(d);
        const double rstd = 1.0 / std::sqrt(var + static_cast<double>(a_.landmark_ln_eps));
        for (int64_t c = 0; c < d; ++c) {
          const float normed = static_cast<float>((lp[c] - mean) * rstd * g[c] + beta[c]);
          lp[c] = gelu_erf(normed);
        }
      }
    }
  }

  // out[rows_a, rows_b] = exp(−Σ_c (a_i − b_j)² / 2)
  static void gaussian(const float* a, int64_t rows_a, const float* b, int64_t rows_b, int64_t d,
                       float* out) {
    for (int64_t i = 0; i < rows_a; ++i) {
      const float* ai = a + i * d;
      for (int64_t j = 0; j < rows_b; ++j) {
        const float* bj = b + j * d;
        float acc = 0.0f;
        for (int64_t c = 0; c < d; ++c) {
          const float diff = ai[c] - bj[c];
          acc += diff * diff;
        }
        out[i * rows_b + j] = std::exp(-acc / 2.0f);
      }
    }
  }

  // ob[i, j] += Σ_{ky,kx} w[ky][kx] · V[(y+ky−k/2, x+kx−k/2), j] (zero padding), V = vb with token stride C.
  static void add_v_conv(const float* vb, const float* w, const Dims& s, float* ob) {
    const int64_t k = s.k, pad = k / 2;
    for (int64_t y = 0; y < s.height; ++y) {
      for (int64_t x = 0; x < s.width; ++x) {
        float* oi = ob + (y * s.width + x) * s.c;
        for (int64_t j = 0; j < s.d; ++j) {
          float acc = 0.0f;
          for (int64_t ky = 0; ky < k; ++ky) {
            const int64_t iy = y + ky - pad;
            if (iy < 0 || iy >= s.height) continue;
            for (int64_t kx = 0; kx < k; ++kx) {
              const int64_t ix = x + kx - pad;
              if (ix < 0 || ix >= s.width) continue;
              acc += w[ky * k + kx] * vb[(iy * s.width + ix) * s.c + j];
            }
          }
          oi[j] += acc;
        }
      }
    }
  }

  LinearAttentionAttrs a_;
};

}  // namespace

Status create_linear_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const LinearAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const std::string where = "LinearAttention '" + plan.node->name + "'";
  Status s = check_linear_attention_attrs(*a);
  if (!s.ok()) return s.with_context(where);
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  Dims dims;
  s = decode_linear_attention_geometry(*a, shapes, plan.num_src, &dims);
  if (!s.ok()) return s.with_context(where);
  const Layout l = layout_of(dims);
  info->workspace_bytes = static_cast<size_t>(l.total) * sizeof(float);
  *kernel = std::make_unique<LinearAttentionKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
