// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SoftmaxAttention's block with bf16 products (attention_bf16.h); built with -mavx512bf16, only called when
// CPUID has AVX512-BF16. The online softmax is the fp32 block's, in fp32.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/attention_bf16.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int W = 16;
using B = xsimd::batch<float, xsimd::avx512bw>;

int64_t up16(int64_t x) {
  return (x + 15) / 16 * 16;
}

inline __m512 dot2(__m512 acc, __m512 a, __m512 b) {
  return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
}

// S[r][j..] = scale · Σ_t Qp[r][t] · Ktp[t][j..] over R rows and NV vectors of keys (pairs along the head
// dim).
template <int R, int NV>
inline void score_tile(const float* qp, int64_t qps, const float* ktp, int64_t np, int64_t dp, float* s,
                       int64_t ss, __m512 scale) {
  __m512 acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t t = 0; t < dp; ++t) {
    __m512 b[NV];
    for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_ps(ktp + t * np + v * W);
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(qp[r * qps + t]);
      for (int v = 0; v < NV; ++v) acc[r][v] = dot2(acc[r][v], a, b[v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(s + r * ss + v * W, _mm512_mul_ps(acc[r][v], scale));
}

template <int R>
inline void score_rows(const float* qp, int64_t qps, const float* ktp, int64_t np, int64_t dp, float* s,
                       int64_t ss, __m512 scale) {
  int64_t j = 0;
  for (; j + 4 * W <= np; j += 4 * W) score_tile<R, 4>(qp, qps, ktp + j, np, dp, s + j, ss, scale);
  for (; j < np; j += W) score_tile<R, 1>(qp, qps, ktp + j, np, dp, s + j, ss, scale);
}

// O[r][c..] += Σ_jp Pp[r][jp] · Vp[jp][c..] over R rows and NV vectors of columns (pairs along the keys).
template <int R, int NV>
inline void pv_tile(const float* pp, int64_t pps, const float* vp, int64_t vs, int64_t pairs, float* o,
                    int64_t os) {
  __m512 acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_loadu_ps(o + r * os + v * W);
  for (int64_t t = 0; t < pairs; ++t) {
    __m512 b[NV];
    for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_ps(vp + t * vs + v * W);
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(pp[r * pps + t]);
      for (int v = 0; v < NV; ++v) acc[r][v] = dot2(acc[r][v], a, b[v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(o + r * os + v * W, acc[r][v]);
}

template <int R>
inline void pv_rows(const float* pp, int64_t pps, const float* vp, int64_t dpad, int64_t pairs, float* o) {
  int64_t c = 0;
  for (; c + 4 * W <= dpad; c += 4 * W) pv_tile<R, 4>(pp, pps, vp + c, dpad, pairs, o + c, dpad);
  for (; c < dpad; c += W) pv_tile<R, 1>(pp, pps, vp + c, dpad, pairs, o + c, dpad);
}

// Vp[t][c] = (V[2t][c], V[2t+1][c]) in bf16 for keys [0, n) of the block, zero past n and past d; np keys.
void pack_v_pairs(const float* v, int64_t vs, int64_t n, int64_t np, int64_t d, int64_t dpad, float* vp) {
  // vcvtne2ps2bf16 gives row 2t's 16 values then row 2t+1's; the permutation interleaves them into pairs.
  alignas(64) static const uint16_t kInterleave[32] = {0,  16, 1,  17, 2,  18, 3,  19, 4,  20, 5,
                                                       21, 6,  22, 7,  23, 8,  24, 9,  25, 10, 26,
                                                       11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i idx = _mm512_load_si512(kInterleave);
  for (int64_t t = 0; t < np / 2; ++t) {
    const int64_t j0 = 2 * t, j1 = 2 * t + 1;
    for (int64_t c = 0; c < dpad; c += W) {
      const int64_t left = d - c;
      const __mmask16 m = static_cast<__mmask16>(left >= W ? 0xffff : left <= 0 ? 0 : (1u << left) - 1);
      const __m512 lo = j0 < n ? _mm512_maskz_loadu_ps(m, v + j0 * vs + c) : _mm512_setzero_ps();
      const __m512 hi = j1 < n ? _mm512_maskz_loadu_ps(m, v + j1 * vs + c) : _mm512_setzero_ps();
      const __m512i h = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
      _mm512_storeu_si512(vp + t * dpad + c, _mm512_permutexvar_epi16(idx, h));
    }
  }
}

float hmax(const B& x) {
  alignas(64) float t[W];
  x.store_aligned(t);
  float m = t[0];
  for (int i = 1; i < W; ++i) m = t[i] > m ? t[i] : m;
  return m;
}

}  // namespace

void attention_block_bf16(const AttnBf16Block& a) {
  auto up = [](int64_t x) { return (x + 15) / 16 * 16; };
  const int64_t d = a.d, nq = a.nq, kb = a.kb, dp = (d + 1) / 2, dpad = up16(d);
  float* ktp = a.scratch;             // [dp][np] pairs
  float* vp = ktp + up(dp * kb);      // [np / 2][dpad] pairs
  float* s = vp + up(kb / 2 * dpad);  // [nq][kb]: scores, then P in pairs
  float* o = s + up(nq * kb);         // [nq][dpad]
  float* qp = o + up(nq * dpad);      // [nq][dp] pairs
  float* row = qp + up(nq * dp);      // [dp] pairs: one key
  float* m = row + up(dp);            // [nq]
  float* l = m + up(nq);              // [nq]
  const float ninf = -std::numeric_limits<float>::infinity();
  std::memset(o, 0, sizeof(float) * nq * dpad);
  for (int64_t i = 0; i < nq; ++i) {
    m[i] = ninf;
    l[i] = 0.0f;
  }
  gemm_bf16_pack_rows(a.q, a.q_stride, nq, d, qp, dp);
  const __m512 scale = _mm512_set1_ps(a.scale);
  for (int64_t j0 = 0; j0 < a.nk; j0 += kb) {
    const int64_t n = a.nk - j0 < kb ? a.nk - j0 : kb;
    const int64_t np = (n + W - 1) / W * W;
    if (!(a.kt_ready && n == a.nk)) {
      // Kᵀ of this key block in pairs, zero past n; V in pairs along the keys.
      for (int64_t jj = 0; jj < np; ++jj) {
        if (jj < n) {
          gemm_bf16_pack_rows(a.k + (j0 + jj) * a.k_stride, 0, 1, d, row, dp);
          for (int64_t t = 0; t < dp; ++t) ktp[t * np + jj] = row[t];
        } else {
          for (int64_t t = 0; t < dp; ++t) ktp[t * np + jj] = 0.0f;
        }
      }
      pack_v_pairs(a.v + j0 * a.v_stride, a.v_stride, n, np, d, dpad, vp);
    }
    int64_t i = 0;
    for (; i + 4 <= nq; i += 4) score_rows<4>(qp + i * dp, dp, ktp, np, dp, s + i * kb, kb, scale);
    for (; i < nq; ++i) score_rows<1>(qp + i * dp, dp, ktp, np, dp, s + i * kb, kb, scale);
    // Online softmax (fp32): P = exp(S - m_new), rescale the running sums and outputs; then P in pairs, in
    // place (each 32 floats are read before their 16 pairs are written at or below them).
    for (i = 0; i < nq; ++i) {
      float* sr = s + i * kb;
      for (int64_t jj = n; jj < np; ++jj) sr[jj] = ninf;
      B mx = B::load_unaligned(sr);
      for (int64_t jj = W; jj < np; jj += W) mx = xsimd::max(mx, B::load_unaligned(sr + jj));
      const float bm = hmax(mx);
      const float mnew = bm > m[i] ? bm : m[i];
      const B mv(mnew);
      B sum(0.0f);
      for (int64_t jj = 0; jj < np; jj += W) {
        const B e = xsimd::exp(B::load_unaligned(sr + jj) - mv);
        e.store_unaligned(sr + jj);
        sum += e;
      }
      if (m[i] != ninf) {
        const float corr = std::exp(m[i] - mnew);
        l[i] *= corr;
        float* orow = o + i * dpad;
        for (int64_t c = 0; c < d; ++c) orow[c] *= corr;
      }
      l[i] += xsimd::hadd(sum);
      m[i] = mnew;
      gemm_bf16_pack_rows(sr, 0, 1, np, sr, 0);
    }
    // O += P·V over np / 2 key pairs.
    for (i = 0; i + 4 <= nq; i += 4) pv_rows<4>(s + i * kb, kb, vp, dpad, np / 2, o + i * dpad);
    for (; i < nq; ++i) pv_rows<1>(s + i * kb, kb, vp, dpad, np / 2, o + i * dpad);
  }
  for (int64_t i = 0; i < nq; ++i) {
    const float r = 1.0f / l[i];
    const float* orow = o + i * dpad;
    float* dst = a.out + i * a.out_stride;
    int64_t c = 0;
    const B rv(r);
    for (; c + W <= d; c += W) (B::load_unaligned(orow + c) * rv).store_unaligned(dst + c);
    for (; c < d; ++c) dst[c] = orow[c] * r;
  }
}

}  // namespace x86
}  // namespace vitrt
