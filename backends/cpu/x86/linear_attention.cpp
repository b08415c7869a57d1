// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LinearAttention (SOFT, docs/models.md §3.4–3.6) on x86: the reference kernel's algorithm (backends/cpu/ref/
// linear_attention.cpp, newton_inverse.cpp) step for step, with the inner loops vectorised across output
// columns (linear_attention_impl.h) and the work split over (batch, head) items.
//
//   A. per item, in parallel: landmarks (r×r conv vectorised over output channels, then LayerNorm with double
//      statistics and erf GELU exactly as the reference), stored transposed as Lᵀ [d][mp]; K2 [m][mp]; and
//      for the scaled Newton variant the whole pseudo-inverse: from m = X86Options::newton_packed_min_m (384)
//      on (K2 larger than about half of L2) on the packed GEMM (newton_iterate.h), below it with the simd row
//      loops, which keep an m×m matrix in L2 and measured faster there (SOFT-Tiny at 448², m = 196: 129
//      against 145 ms).
//      Both sum every element in the same order, so they give the same bits.
//   B. legacy Newton only: the one step size of the batch (halving search, residual norms in parallel), then
//   the
//      iterations per item in parallel.
//   C. per item: V copied to [N][dp], K1 [N][mp], K1ᵀ·V [m][dp], then W = K2⁺·(K1ᵀ·V) [m][dp], then per
//      block of 32 tokens K1·W plus the depthwise V conv, written into the merged [B,N,C] output. This is
//      the reference's (K1·K2⁺)·(K1ᵀ·V) reassociated (docs/models.md §3.4): N·m·d + m·m·d multiply-adds
//      instead of N·m·m + N·m·d; the logits stay within the PyTorch parity tolerance (tests/models) and the
//      outputs within 2e-5 of the reference kernel. With fewer items than threads the items run one after
//      another, each step split over token blocks (K1ᵀ·V and W over landmark rows, so that every element is
//      still summed over all tokens in order). Session precision bf16 (ctx->bf16, docs/architecture.md
//      §7.1): K1·W runs on the AVX512-BF16 packed GEMM (packed_gemm_bf16.h), W rounded into pair panels once
//      per item and each block of K1 rows into pairs; the landmarks, K1, K2, the Newton inverse, K1ᵀ·V and W
//      stay fp32.
//
// m and d are padded to mp, dp (multiples of the vector width) with zero columns, so every loop runs on whole
// vectors and the top-left blocks stay exact. Apart from C's grouping the sums run in the reference's order
// (FMA instead of a·b + c), the scalar steps (step sizes, residual norms, SOFT-Norm scaling, LayerNorm, GELU)
// are the reference's own code. Workspace (floats, every region 64-byte aligned), sized at plan time for the
// planned threads and batch:
//   shared: packed landmark weights [d·r·r][dp], Lᵀ [BH][d][mp], K2 [BH][mp][mp], K2⁺ [BH][mp][mp], [BH] ×2;
//   per thread: V [N][dp], K1 [N][mp], K1ᵀ·V [mp][dp], W [mp][dp], landmarks [m][dp], P [mp][mp], Newton
//               work, a block of the output [32][dp], D^-1/2 [mp]; bf16 only: W in pair panels and a block of
//               K1 in pairs [32][pairs(m)].
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/linear_attention_simd.h"
#include "backends/cpu/x86/newton_iterate.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_internal.h"
#include "backends/operand_check.h"
#include "ops/linear_attention_geometry.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kOutBlock = 32;  // tokens per (K1·K2⁺)·(K1ᵀ·V) block: both blocks stay in L1
constexpr int64_t kRowBlock = 64;  // tokens per K1 block when one item is split over the threads
constexpr int64_t kKvChunk = 256;  // tokens per K1ᵀ·V pass (keeps the K1 and V rows in L1/L2)
constexpr int64_t kKvRows = 6;     // landmark rows per K1ᵀ·V task (the gemm's row tile)

// The op's geometry (ops/linear_attention_geometry.h) and m, d padded to whole vectors.
struct Dims : LinearAttentionGeometry {
  int64_t mp, dp;
};

int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}

Dims padded(const LinearAttentionGeometry& g, int width) {
  Dims s;
  static_cast<LinearAttentionGeometry&>(s) = g;
  s.mp = round_up(s.m, width);
  s.dp = round_up(s.d, width);
  return s;
}

struct Layout {
  // shared
  int64_t wp, lt, k2, inv, rowmax, resid;
  // per thread, relative to thread(t) = thread0 + t·per_thread
  int64_t thread0, per_thread, vpad, k1, kv, kw, lm, p, work, ob, dsym, kw16, a16;
  int64_t total;
};

// gbf: the bf16 tile for K1·W, or null in fp32.
Layout layout_of(const Dims& s, const GemmKernels* g, const GemmKernels* gbf, int threads) {
  Layout l{};
  int64_t off = 0;
  auto take = [&](int64_t floats) {
    const int64_t at = off;
    off += round_up(floats, 16);
    return at;
  };
  const int64_t bh = s.batch * s.heads, mm = s.mp * s.mp;
  l.wp = take(s.d * s.r * s.r * s.dp);
  l.lt = take(bh * s.d * s.mp);
  l.k2 = take(bh * mm);
  l.inv = take(bh * mm);
  l.rowmax = take(bh);
  l.resid = take(bh);
  l.thread0 = off;
  off = 0;
  l.vpad = take(s.n * s.dp);
  l.k1 = take(s.n * s.mp);
  l.kv = take(s.mp * s.dp);
  l.kw = take(s.mp * s.dp);
  l.lm = take(s.m * s.dp);
  l.p = take(mm);
  l.work = take(newton_work_floats(g, s.m, s.mp));  // >= m·mp (legacy residuals)
  l.ob = take(kOutBlock * s.dp);
  l.dsym = take(s.mp);
  l.kw16 = gbf ? take(gemm_packed_floats(s.dp, gemm_bf16_pairs(s.m), gbf->nr)) : 0;
  l.a16 = gbf ? take(kOutBlock * gemm_bf16_pairs(s.m)) : 0;
  l.per_thread = off;
  l.total = l.thread0 + threads * l.per_thread;
  return l;
}

// max_i Σ_j k[i][j] in float, as the reference's max_row_sum.
float max_row_sum(const float* k, int64_t m, int64_t ld) {
  float best = -INFINITY;
  for (int64_t i = 0; i < m; ++i) {
    float s = 0.0f;
    for (int64_t j = 0; j < m; ++j) s += k[i * ld + j];
    best = s > best ? s : best;
  }
  return best;
}

class LinearAttentionKernel final : public ref::RefKernel {
 public:
  LinearAttentionKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const LinearAttentionSimd* simd,
                        const GemmKernels* gemm, const GemmKernels* gemm_bf16, bool packed_newton,
                        const LinearAttentionAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        simd_(simd),
        gemm_(gemm),
        gemm_bf16_(gemm_bf16),
        packed_newton_(packed_newton),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    Run run;
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    LinearAttentionGeometry g;
    const Status decoded = decode_linear_attention_geometry(a_, shapes, args.num_src, &g);
    if (!decoded.ok()) return fail(decoded.message());
    run.s = padded(g, simd_->width);
    const Dims& s = run.s;
    if (s.batch == 0) return Status::Ok();
    const int nt = run_threads(args, planned_threads_);
    run.l = layout_of(s, gemm_, gemm_bf16_, nt);
    VITRT_RETURN_IF_ERROR(check_workspace(args, run.l.total));
    run.ws = static_cast<float*>(args.workspace);
    run.q = args.src[0]->f32();
    run.v = args.src[1]->f32();
    run.ln_g = args.src[3]->f32();
    run.ln_b = args.src[4]->f32();
    run.vw = args.src[5]->f32();
    run.out = args.dst[0]->f32();
    pack_landmark_weights(args.src[2]->f32(), run);

    // A: landmarks and K2 (and the scaled pseudo-inverse) per item.
    const int64_t items = s.batch * s.heads;
    const bool legacy = a_.pinv == PseudoInverse::kNewtonLegacy;
    ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t bh = lo; bh < hi; ++bh) {
        build_landmarks(run, bh, tid);
        if (!legacy) invert_scaled(run, bh, tid);
      }
    });
    // B: the legacy pseudo-inverse, one step size for the whole batch.
    if (legacy) invert_legacy(run, nt);

    // C: the output.
    if (items >= nt) {
      ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int tid) {
        for (int64_t bh = lo; bh < hi; ++bh) {
          prepare_rows(run, bh, 0, s.n, tid);
          kv_rows(run, 0, s.m, tid);
          project_rows(run, bh, 0, s.m, tid);
          pack_projection(run, tid);
          output_rows(run, bh, 0, s.n, tid, tid);
        }
      });
    } else {
      const int64_t row_blocks = (s.n + kRowBlock - 1) / kRowBlock;
      const int64_t out_blocks = (s.n + kOutBlock - 1) / kOutBlock;
      const int64_t kv_tasks = (s.m + kKvRows - 1) / kKvRows;
      for (int64_t bh = 0; bh < items; ++bh) {  // the items share thread 0's V, K1, K1ᵀ·V and W
        ThreadPool::parallel_for(row_blocks, nt, [&](int64_t lo, int64_t hi, int) {
          prepare_rows(run, bh, lo * kRowBlock, std::min(hi * kRowBlock, s.n), 0);
        });
        ThreadPool::parallel_for(kv_tasks, nt, [&](int64_t lo, int64_t hi, int) {
          kv_rows(run, lo * kKvRows, std::min(hi * kKvRows, s.m), 0);
        });
        ThreadPool::parallel_for(kv_tasks, nt, [&](int64_t lo, int64_t hi, int) {
          project_rows(run, bh, lo * kKvRows, std::min(hi * kKvRows, s.m), 0);
        });
        pack_projection(run, 0);
        ThreadPool::parallel_for(out_blocks, nt, [&](int64_t lo, int64_t hi, int tid) {
          output_rows(run, bh, lo * kOutBlock, std::min(hi * kOutBlock, s.n), 0, tid);
        });
      }
    }
    return Status::Ok();
  }

 private:
  struct Run {
    Dims s;
    Layout l;
    float* ws;
    const float *q, *v, *ln_g, *ln_b, *vw;
    float* out;
    float* thread(int t) const { return ws + l.thread0 + t * l.per_thread; }
  };

  // wp[(c·r + ky)·r + kx][o] = w[o][c][ky][kx], zero for o ≥ d.
  void pack_landmark_weights(const float* lw, const Run& run) const {
    const Dims& s = run.s;
    const int64_t taps = s.d * s.r * s.r;
    float* wp = run.ws + run.l.wp;
    for (int64_t t = 0; t < taps; ++t) {
      float* row = wp + t * s.dp;
      for (int64_t o = 0; o < s.d; ++o) row[o] = lw[o * taps + t];
      for (int64_t o = s.d; o < s.dp; ++o) row[o] = 0.0f;
    }
  }

  // Lᵀ and K2 of item bh (K2's padding zeroed), and its largest row sum.
  void build_landmarks(const Run& run, int64_t bh, int tid) const {
    const Dims& s = run.s;
    const int64_t b = bh / s.heads, h = bh % s.heads;
    float* lm = run.thread(tid) + run.l.lm;
    LandmarkConvArgs c;
    c.q = run.q + b * s.n * s.c + h * s.d;
    c.q_stride = s.c;
    c.scale = a_.q_scale;
    c.wp = run.ws + run.l.wp;
    c.d = s.d;
    c.dp = s.dp;
    c.r = s.r;
    c.width = s.width;
    c.m_h = s.m_h;
    c.m_w = s.m_w;
    c.lm = lm;
    simd_->landmark_conv(c);
    // LayerNorm(d) with double statistics and erf GELU: the reference's arithmetic, element for element.
    float* lt = run.ws + run.l.lt + bh * s.d * s.mp;
    for (int64_t i = 0; i < s.m; ++i) {
      const float* lp = lm + i * s.dp;
      double mean = 0.0;
      for (int64_t c2 = 0; c2 < s.d; ++c2) mean += lp[c2];
      mean /= static_cast<double>(s.d);
      double var = 0.0;
      for (int64_t c2 = 0; c2 < s.d; ++c2) {
        const double dv = lp[c2] - mean;
        var += dv * dv;
      }
      var /= static_cast<double>(s.d);
      const double rstd = 1.0 / std::sqrt(var + static_cast<double>(a_.landmark_ln_eps));
      for (int64_t c2 = 0; c2 < s.d; ++c2) {
        const float normed = static_cast<float>((lp[c2] - mean) * rstd * run.ln_g[c2] + run.ln_b[c2]);
        lt[c2 * s.mp + i] = ref::gelu_erf(normed);
      }
    }
    for (int64_t c2 = 0; c2 < s.d; ++c2)
      for (int64_t i = s.m; i < s.mp; ++i) lt[c2 * s.mp + i] = 0.0f;
    float* k2 = run.ws + run.l.k2 + bh * s.mp * s.mp;
    simd_->gaussian(lt, 1, s.mp, 1.0f, lt, s.mp, s.m, s.d, s.mp, s.m, k2, s.mp);
    for (int64_t i = s.m * s.mp; i < s.mp * s.mp; ++i) k2[i] = 0.0f;
    run.ws[run.l.rowmax + bh] = max_row_sum(k2, s.m, s.mp);
  }

  // newton_inverse_scaled: α = 0.9·2/s², P = K2 + reg·I, V = α·P, then the iterations.
  void invert_scaled(const Run& run, int64_t bh, int tid) const {
    const Dims& s = run.s;
    const int64_t mm = s.mp * s.mp;
    const float* k2 = run.ws + run.l.k2 + bh * mm;
    float* inv = run.ws + run.l.inv + bh * mm;
    float* p = run.thread(tid) + run.l.p;
    const float sum = run.ws[run.l.rowmax + bh];
    const float alpha = (1.0f / (sum * sum)) * static_cast<float>(0.9 * 2);  // 0.9 * 2 / s**2
    for (int64_t i = 0; i < s.m * s.mp; ++i) p[i] = k2[i];
    for (int64_t i = 0; i < s.m; ++i) p[i * s.mp + i] += a_.newton_regularizer;  // after α
    for (int64_t i = 0; i < s.m * s.mp; ++i) inv[i] = alpha * p[i];
    iterate(run, p, inv, tid);
    if (a_.symmetric_normalization) normalize(run, bh, tid);
  }

  // The Newton–Schulz steps on v = inv (in place) with thread tid's work region.
  void iterate(const Run& run, const float* p, float* inv, int tid) const {
    const Dims& s = run.s;
    float* work = run.thread(tid) + run.l.work;
    if (packed_newton_)
      newton_iterate(gemm_, p, s.m, s.mp, a_.newton_iterations, inv, work);
    else
      simd_->newton_iterate(p, s.m, s.mp, a_.newton_iterations, inv, work);
  }

  // newton_inverse_legacy over all items: α = 2/s² with s the largest row sum of the batch, halved while the
  // largest ‖I − K2·αK2‖₁ exceeds 1.01 (at most 10 times), then the iterations per item.
  void invert_legacy(const Run& run, int nt) const {
    const Dims& s = run.s;
    const int64_t items = s.batch * s.heads, mm = s.mp * s.mp;
    float sum = -INFINITY;
    for (int64_t bh = 0; bh < items; ++bh) {
      const float sb = run.ws[run.l.rowmax + bh];
      sum = sb > sum ? sb : sum;
    }
    float alpha = (1.0f / (sum * sum)) * 2.0f;
    auto pnorm = [&](float a) {
      ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int tid) {
        for (int64_t bh = lo; bh < hi; ++bh) {
          const float* k2 = run.ws + run.l.k2 + bh * mm;
          float* inv = run.ws + run.l.inv + bh * mm;
          for (int64_t i = 0; i < s.m * s.mp; ++i) inv[i] = a * k2[i];
          float* tmp = run.thread(tid) + run.l.work;
          simd_->gemm(k2, s.mp, 1, inv, s.mp, s.m, s.m, s.mp, false, tmp, s.mp);
          float best = -INFINITY;  // the largest column sum of |I − K2·V|
          for (int64_t j = 0; j < s.m; ++j) {
            float cs = 0.0f;
            for (int64_t i = 0; i < s.m; ++i) cs += std::fabs((i == j ? 1.0f : 0.0f) - tmp[i * s.mp + j]);
            best = cs > best ? cs : best;
          }
          run.ws[run.l.resid + bh] = best;
        }
      });
      float best = -INFINITY;
      for (int64_t bh = 0; bh < items; ++bh) {
        const float r = run.ws[run.l.resid + bh];
        best = r > best ? r : best;
      }
      return best;
    };
    float norm = pnorm(alpha);
    for (int tries = 0; norm > 1.01f && tries < 10; ++tries) {
      alpha *= 0.5f;
      norm = pnorm(alpha);
    }
    ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t bh = lo; bh < hi; ++bh) {
        iterate(run, run.ws + run.l.k2 + bh * mm, run.ws + run.l.inv + bh * mm, tid);
        if (a_.symmetric_normalization) normalize(run, bh, tid);
      }
    });
  }

  // SOFT-Norm: K2⁺[i][j] · d_i · d_j with d = 1/sqrt(row sums of K2).
  void normalize(const Run& run, int64_t bh, int tid) const {
    const Dims& s = run.s;
    const int64_t mm = s.mp * s.mp;
    const float* k2 = run.ws + run.l.k2 + bh * mm;
    float* inv = run.ws + run.l.inv + bh * mm;
    float* dsym = run.thread(tid) + run.l.dsym;
    for (int64_t i = 0; i < s.m; ++i) {
      float sum = 0.0f;
      for (int64_t j = 0; j < s.m; ++j) sum += k2[i * s.mp + j];
      dsym[i] = 1.0f / std::sqrt(sum);
    }
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.m; ++j) inv[i * s.mp + j] = dsym[i] * inv[i * s.mp + j] * dsym[j];
  }

  // Tokens [i0, i1) of item bh: V rows into group g's [N][dp] copy, K1 rows into its [N][mp].
  void prepare_rows(const Run& run, int64_t bh, int64_t i0, int64_t i1, int g) const {
    const Dims& s = run.s;
    const int64_t b = bh / s.heads, h = bh % s.heads;
    float* vpad = run.thread(g) + run.l.vpad;
    const float* vb = run.v + b * s.n * s.c + h * s.d;
    for (int64_t i = i0; i < i1; ++i) {
      float* dst = vpad + i * s.dp;
      const float* src = vb + i * s.c;
      for (int64_t j = 0; j < s.d; ++j) dst[j] = src[j];
      for (int64_t j = s.d; j < s.dp; ++j) dst[j] = 0.0f;
    }
    simd_->gaussian(run.q + (b * s.n + i0) * s.c + h * s.d, s.c, 1, a_.q_scale,
                    run.ws + run.l.lt + bh * s.d * s.mp, s.mp, i1 - i0, s.d, s.mp, s.m,
                    run.thread(g) + run.l.k1 + i0 * s.mp, s.mp);
  }

  // Landmark rows [p0, p1) of group g's K1ᵀ·V, each summed over all tokens in order (token chunks
  // accumulate).
  void kv_rows(const Run& run, int64_t p0, int64_t p1, int g) const {
    const Dims& s = run.s;
    const float* k1 = run.thread(g) + run.l.k1;
    const float* vpad = run.thread(g) + run.l.vpad;
    float* kv = run.thread(g) + run.l.kv;
    for (int64_t t0 = 0; t0 < s.n; t0 += kKvChunk) {
      const int64_t nk = std::min(kKvChunk, s.n - t0);
      simd_->gemm(k1 + t0 * s.mp + p0, 1, s.mp, vpad + t0 * s.dp, s.dp, p1 - p0, nk, s.dp, t0 > 0,
                  kv + p0 * s.dp, s.dp);
    }
  }

  // Landmark rows [p0, p1) of group g's W = K2⁺·(K1ᵀ·V): item bh's K2⁺ times group g's K1ᵀ·V.
  void project_rows(const Run& run, int64_t bh, int64_t p0, int64_t p1, int g) const {
    const Dims& s = run.s;
    const float* inv = run.ws + run.l.inv + bh * s.mp * s.mp;
    simd_->gemm(inv + p0 * s.mp, s.mp, 1, run.thread(g) + run.l.kv, s.dp, p1 - p0, s.m, s.dp, false,
                run.thread(g) + run.l.kw + p0 * s.dp, s.dp);
  }

  // bf16: group g's W rounded into pair panels for the bf16 GEMM (all dp columns, so that K1·W fills the
  // output block's padding too).
  void pack_projection(const Run& run, int g) const {
    if (!gemm_bf16_) return;
    const Dims& s = run.s;
    gemm_bf16_pack_b(run.thread(g) + run.l.kw, s.dp, s.m, s.dp, gemm_bf16_->nr, run.thread(g) + run.l.kw16);
  }

  // Output tokens [i0, i1) of item bh from group g's buffers (W from project_rows), with thread tid's block
  // scratch.
  void output_rows(const Run& run, int64_t bh, int64_t i0, int64_t i1, int g, int tid) const {
    const Dims& s = run.s;
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const float* k1 = run.thread(g) + run.l.k1;
    const float* kw = run.thread(g) + run.l.kw;
    float* ob = run.thread(tid) + run.l.ob;
    VConvArgs c;
    c.v = run.thread(g) + run.l.vpad;
    c.dp = s.dp;
    c.d = s.d;
    c.w = run.vw + h * s.k * s.k;
    c.k = s.k;
    c.height = s.height;
    c.width = s.width;
    c.attn = ob;
    c.out_stride = s.c;
    for (int64_t i = i0; i < i1; i += kOutBlock) {
      const int64_t nb = std::min(kOutBlock, i1 - i);
      if (gemm_bf16_) {  // K1·W with both rounded to bf16, fp32 sums
        const int64_t pairs = gemm_bf16_pairs(s.m);
        float* a16 = run.thread(tid) + run.l.a16;
        gemm_bf16_pack_rows(k1 + i * s.mp, s.mp, nb, s.m, a16, pairs);
        gemm_packed_product(gemm_bf16_, a16, pairs, nb, pairs, run.thread(g) + run.l.kw16, s.dp, ob, s.dp);
      } else {
        simd_->gemm(k1 + i * s.mp, s.mp, 1, kw, s.dp, nb, s.m, s.dp, false, ob, s.dp);  // K1·W
      }
      c.i0 = i;
      c.i1 = i + nb;
      c.out = run.out + (b * s.n + i) * s.c + h * s.d;
      simd_->v_conv_add(c);
    }
  }

  std::shared_ptr<Context> ctx_;
  const LinearAttentionSimd* simd_;
  const GemmKernels* gemm_;       // the packed GEMM tile for m×m products
  const GemmKernels* gemm_bf16_;  // bf16: the AVX512-BF16 tile for K1·W; null in fp32
  bool packed_newton_;
  LinearAttentionAttrs a_;
  int planned_threads_;
};

}  // namespace

// Declines (no kernel: the reference runs and reports) anything the reference factory would reject.
Status create_linear_attention(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                               std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const LinearAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (!check_linear_attention_attrs(*a).ok() || plan.num_dst != 1) return Status::Ok();
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  LinearAttentionGeometry g;
  if (!decode_linear_attention_geometry(*a, shapes, plan.num_src, &g).ok()) return Status::Ok();
  const LinearAttentionSimd* simd =
      ctx->isa == X86Isa::kAvx512 ? linear_attention_simd_avx512() : linear_attention_simd_avx2();
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  const Dims dims = padded(g, simd->width);
  const GemmKernels* gemm =
      gemm_kernels_for(ctx->isa == X86Isa::kAvx512, dims.m, dims.m, dims.m, ctx->options.gemm_tile);
  const GemmKernels* gemm_bf16 =
      ctx->bf16 ? gemm_kernels_bf16_for(kOutBlock, dims.dp, gemm_bf16_pairs(dims.m), ctx->options.gemm_tile)
                : nullptr;
  const Layout l = layout_of(dims, gemm, gemm_bf16, threads);
  info->workspace_bytes = static_cast<size_t>(l.total) * sizeof(float);
  *kernel = std::make_unique<LinearAttentionKernel>(plan, ctx, simd, gemm, gemm_bf16,
                                                    dims.m >= ctx->options.newton_packed_min_m, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
