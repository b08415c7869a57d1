// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// LaViT's attention inner loops (lavit_attention_simd.h), written once on xsimd batches and instantiated per
// ISA (lavit_attention_avx512.cpp, lavit_attention_avx2.cpp). Everything lives in an anonymous namespace so
// that no inline function compiled with AVX-512 flags can be merged by the linker into the AVX2 or baseline
// code.
//
// Two register-tile shapes do all the arithmetic: a row-broadcast tile (R rows of a strided A broadcast
// against V vectors of a row-major B: the scores q·Kᵀ, T = prev·Θᵀ and P·V) and the packed MR x NR GEMM tile
// of Ψ·T. Column tails: our own packed operands are zero-padded to a multiple of 16; V and the outputs are
// not, so their last vector is recomputed at an overlapping offset (same values, written twice) and only a
// width below one vector takes a scalar loop.
#include <cmath>
#include <cstdint>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/fma_tile.h"
#include "backends/cpu/x86/lavit_attention_simd.h"
#include "backends/cpu/x86/vec_fma.h"

namespace vitrt {
namespace x86 {
namespace {
namespace lv {

template <class A>
using VF = xsimd::batch<float, A>;

constexpr int kRows = 4;  // rows per row-broadcast tile
constexpr int kGemmMr = 6;

template <class A>
constexpr int max_vectors() {  // vectors per row-broadcast tile: 16 (AVX-512) or 8 (AVX2) accumulators
  return VF<A>::size == 16 ? 4 : 2;
}

template <class A>
inline float hmax(const VF<A>& v) {
  alignas(64) float t[VF<A>::size];
  v.store_aligned(t);
  float m = t[0];
  for (std::size_t i = 1; i < VF<A>::size; ++i) m = t[i] > m ? t[i] : m;
  return m;
}

// st(r, v, Σ_t a[r·lda + t] · b[t·ldb + v·W]) for R rows and V vectors.
template <class A, int R, int V, class St>
inline void bcast_tile(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t kn, const St& st) {
  using B = VF<A>;
  B acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = B(0.0f);
  fma_tile<XsimdOps<A>, R, V>(acc, a, lda, 1, b, ldb, kn);
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) st(r, v, acc[r][v]);
}

// The same over columns [0, ncol), ncol a multiple of the vector width: st(r, col, vector at col).
template <class A, int R, class St>
inline void bcast_cols(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t kn, int64_t ncol,
                       const St& st) {
  constexpr int W = VF<A>::size;
  constexpr int VM = max_vectors<A>();
  int64_t j = 0;
  auto at = [&](int64_t j0) { return [&st, j0](int r, int v, const VF<A>& x) { st(r, j0 + v * W, x); }; };
  for (; j + VM * W <= ncol; j += VM * W) bcast_tile<A, R, VM>(a, lda, b + j, ldb, kn, at(j));
  switch ((ncol - j) / W) {
    case 0:
      break;
    case 1:
      bcast_tile<A, R, 1>(a, lda, b + j, ldb, kn, at(j));
      break;
    case 2:
      bcast_tile<A, R, 2>(a, lda, b + j, ldb, kn, at(j));
      break;
    default:
      bcast_tile<A, R, 3>(a, lda, b + j, ldb, kn, at(j));
      break;
  }
}

// o[r][0..V·W) = inv[r] · Σ_j p[r·ldp + j] · v[j·vs + 0..V·W), R rows.
template <class A, int R, int V>
inline void pv_tile(const float* p, int64_t ldp, const float* v, int64_t vs, int64_t nk, const float* inv,
                    float* o, int64_t os) {
  using B = VF<A>;
  constexpr int W = B::size;
  B acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < V; ++c) acc[r][c] = B(0.0f);
  fma_tile<XsimdOps<A>, R, V>(acc, p, ldp, 1, v, vs, nk);
  for (int r = 0; r < R; ++r) {
    const B s(inv[r]);
    for (int c = 0; c < V; ++c) (acc[r][c] * s).store_unaligned(o + r * os + c * W);
  }
}

// P·V for R rows over all d output columns (tail: an overlapping last vector, or scalar below one vector).
template <class A, int R>
inline void pv_rows(const float* p, int64_t ldp, const float* v, int64_t vs, int64_t nk, int64_t d,
                    const float* inv, float* o, int64_t os) {
  constexpr int W = VF<A>::size;
  constexpr int VM = max_vectors<A>();
  if (d < W) {
    for (int r = 0; r < R; ++r)
      for (int64_t c = 0; c < d; ++c) {
        float acc = 0.0f;
        for (int64_t j = 0; j < nk; ++j) acc += p[r * ldp + j] * v[j * vs + c];
        o[r * os + c] = acc * inv[r];
      }
    return;
  }
  int64_t c = 0;
  for (; c + VM * W <= d; c += VM * W) pv_tile<A, R, VM>(p, ldp, v + c, vs, nk, inv, o + c, os);
  switch ((d - c) / W) {
    case 0:
      break;
    case 1:
      pv_tile<A, R, 1>(p, ldp, v + c, vs, nk, inv, o + c, os);
      break;
    case 2:
      pv_tile<A, R, 2>(p, ldp, v + c, vs, nk, inv, o + c, os);
      break;
    default:
      pv_tile<A, R, 3>(p, ldp, v + c, vs, nk, inv, o + c, os);
      break;
  }
  if (d % W) pv_tile<A, R, 1>(p, ldp, v + d - W, vs, nk, inv, o + d - W, os);
}

// Row r of a: s (+ bias) (+ mask) -> scores (when wanted) -> p = exp(s - max), padded with zeros to nkp;
// returns 1/Σp.
template <class A>
inline float finish_row(const SoftmaxPv& a, int64_t r) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  const int64_t nk = a.nk, nkp = a.nkp;
  const float* sr = a.s + r * a.s_stride;
  const float* br = a.bias ? a.bias + r * nk : nullptr;
  const float* mr = a.mask ? a.mask + r * nk : nullptr;
  float* so = a.scores ? a.scores + r * nk : nullptr;
  float* pr = a.p + r * nkp;
  int64_t j = 0;
  for (; j + W <= nk; j += W) {
    B x = B::load_unaligned(sr + j);
    if (br) x += B::load_unaligned(br + j);
    if (mr) x += B::load_unaligned(mr + j);
    if (so) x.store_unaligned(so + j);
    x.store_aligned(pr + j);
  }
  for (; j < nk; ++j) {
    float x = br ? sr[j] + br[j] : sr[j];
    if (mr) x += mr[j];
    if (so) so[j] = x;
    pr[j] = x;
  }
  const float ninf = -std::numeric_limits<float>::infinity();
  for (; j < nkp; ++j) pr[j] = ninf;
  B mx = B::load_aligned(pr);
  for (j = W; j < nkp; j += W) mx = xsimd::max(mx, B::load_aligned(pr + j));
  const B mv(hmax<A>(mx));
  B sum(0.0f);
  for (j = 0; j < nkp; j += W) {
    const B e = xsimd::exp(B::load_aligned(pr + j) - mv);
    e.store_aligned(pr + j);
    sum += e;
  }
  return 1.0f / xsimd::hadd(sum);
}

// Finishes rows r0..r0+R-1 of a and writes their outputs.
template <class A, int R>
inline void finish_group(const SoftmaxPv& a, int64_t r0) {
  float inv[R];
  for (int r = 0; r < R; ++r) inv[r] = finish_row<A>(a, r0 + r);
  pv_rows<A, R>(a.p + r0 * a.nkp, a.nkp, a.v, a.v_stride, a.nk, a.d, inv, a.out + r0 * a.out_stride,
                a.out_stride);
}

template <class A>
void softmax_pv(const SoftmaxPv& a) {
  int64_t r = 0;
  for (; r + kRows <= a.rows; r += kRows) finish_group<A, kRows>(a, r);
  for (; r < a.rows; ++r) finish_group<A, 1>(a, r);
}

template <class A>
void score_block(const ScoreBlock& sb) {
  using B = VF<A>;
  SoftmaxPv a = sb.pv;
  a.s = a.p;
  a.s_stride = a.nkp;
  const int64_t d = sb.pv.d, nkp = a.nkp;
  const B sc(sb.scale);
  int64_t r = 0;
  // Scores of a group of rows, then straight into softmax and P·V while they are in L1.
  for (; r + kRows <= a.rows; r += kRows) {
    float* p = a.p + r * nkp;
    bcast_cols<A, kRows>(sb.q + r * sb.q_stride, sb.q_stride, sb.kt, nkp, d, nkp,
                         [&](int i, int64_t col, const B& x) { (x * sc).store_aligned(p + i * nkp + col); });
    finish_group<A, kRows>(a, r);
  }
  for (; r < a.rows; ++r) {
    float* p = a.p + r * nkp;
    bcast_cols<A, 1>(sb.q + r * sb.q_stride, sb.q_stride, sb.kt, nkp, d, nkp,
                     [&](int, int64_t col, const B& x) { (x * sc).store_aligned(p + col); });
    finish_group<A, 1>(a, r);
  }
}

template <class A>
void theta_rows(const ThetaRows& t) {
  using B = VF<A>;
  const int64_t nkp = t.nkp;
  int64_t r = 0;
  for (; r + kRows <= t.rows; r += kRows) {
    float* dst = t.t + r * nkp;
    bcast_cols<A, kRows>(t.prev + r * t.nk, t.nk, t.theta_t, nkp, t.nk, nkp,
                         [&](int i, int64_t col, const B& x) {
                           (x + B::load_unaligned(t.theta_b + col)).store_aligned(dst + i * nkp + col);
                         });
  }
  for (; r < t.rows; ++r) {
    float* dst = t.t + r * nkp;
    bcast_cols<A, 1>(t.prev + r * t.nk, t.nk, t.theta_t, nkp, t.nk, nkp, [&](int, int64_t col, const B& x) {
      (x + B::load_unaligned(t.theta_b + col)).store_aligned(dst + col);
    });
  }
}

// C[0..rows)[0..V·W) (+)= A panel · B panel over kn, A packed [kn][MR], B [kn][ldb]; the first k block adds
// the row bias instead of C.
template <class A, int V>
inline void gemm_tile(const float* ap, const float* bp, int64_t ldb, int64_t kn, float* c, int64_t ldc,
                      int rows, const float* bias, bool first) {
  using B = VF<A>;
  constexpr int W = B::size;
  constexpr int MR = kGemmMr;
  B acc[MR][V];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = B(0.0f);
  for (int64_t t = 0; t < kn; ++t) {
    B bv[V];
    for (int v = 0; v < V; ++v) bv[v] = B::load_unaligned(bp + t * ldb + v * W);
    const float* at = ap + t * MR;
    for (int r = 0; r < MR; ++r) {
      const B av(at[r]);
      for (int v = 0; v < V; ++v) acc[r][v] = vec_fma(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    if (r >= rows) break;
    float* cr = c + r * ldc;
    for (int v = 0; v < V; ++v) {
      const B prev = first ? B(bias[r]) : B::load_unaligned(cr + v * W);
      (acc[r][v] + prev).store_unaligned(cr + v * W);
    }
  }
}

template <class A>
constexpr int gemm_nr() {
  return VF<A>::size == 16 ? 64 : 16;
}

template <class A>
void panel_gemm(const PanelGemm& g) {
  constexpr int W = VF<A>::size;
  constexpr int MR = kGemmMr, NR = gemm_nr<A>();
  // Equal k blocks of at most 512 (the 6 x kc A panel stays in L1) and column blocks of 256 (the kc x 256 B
  // block stays in L2); measured flat around these values, within a few % of oneDNN's brgemm on the same
  // shapes.
  constexpr int64_t kMaxKc = 512, kNc = 256;
  const int64_t nkb = (g.k + kMaxKc - 1) / kMaxKc, kc = nkb ? (g.k + nkb - 1) / nkb : 0;
  const int64_t np = (g.ncolp + NR - 1) / NR, ppb = NR >= kNc ? 1 : kNc / NR;
  for (int64_t p0 = 0; p0 < np; p0 += ppb) {
    const int64_t p1 = p0 + ppb < np ? p0 + ppb : np;
    for (int64_t k0 = 0; k0 < g.k; k0 += kc) {
      const int64_t kn = g.k - k0 < kc ? g.k - k0 : kc;
      for (int64_t mb = g.mb_lo; mb < g.mb_hi; ++mb) {
        const int rows = static_cast<int>(g.m - mb * MR < MR ? g.m - mb * MR : MR);
        const float* ap = g.a + (mb * g.k + k0) * MR;
        const float* bias = g.bias + mb * MR;
        float* crow = g.c + mb * MR * g.ldc;
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t w = g.ncolp - p * NR < NR ? g.ncolp - p * NR : NR;
          const float* bp = g.b + p * g.k * NR + k0 * w;
          float* c = crow + p * NR;
          switch (w / W) {
            case 1:
              gemm_tile<A, 1>(ap, bp, w, kn, c, g.ldc, rows, bias, k0 == 0);
              break;
            case 2:
              gemm_tile<A, 2>(ap, bp, w, kn, c, g.ldc, rows, bias, k0 == 0);
              break;
            case 3:
              gemm_tile<A, 3>(ap, bp, w, kn, c, g.ldc, rows, bias, k0 == 0);
              break;
            default:
              gemm_tile<A, (NR / W < 4 ? NR / W : 4)>(ap, bp, w, kn, c, g.ldc, rows, bias, k0 == 0);
              break;
          }
        }
      }
    }
  }
}

// Below one vector of keys: the same arithmetic, scalar.
inline void residual_row_scalar(const ResidualRow& r) {
  const int64_t nk = r.nk, k = r.k;
  for (int64_t ox = 0; ox < r.w2; ++ox) {
    for (int64_t c = 0; c < r.h1; ++c) {
      const float* src = r.s + c * r.n1 * nk;
      for (int64_t j = 0; j < nk; ++j) {
        float acc = r.dw_b[c];
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx)
            acc += r.dw[(c * k + ky) * k + kx] * src[((r.oy * k + ky) * r.w1 + ox * k + kx) * nk + j];
        r.a[c * nk + j] = acc;
      }
    }
    for (int64_t o = 0; o < r.h2; ++o) {
      float* dst = r.out + (o * r.n2 + r.oy * r.w2 + ox) * nk;
      for (int64_t j = 0; j < nk; ++j) {
        float acc = r.pw_b[o];
        for (int64_t c = 0; c < r.h1; ++c) acc += r.pw[o * r.h1 + c] * r.a[c * nk + j];
        dst[j] = acc * r.gamma[o];
      }
    }
  }
}

template <class A>
void residual_row(const ResidualRow& r) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  const int64_t nk = r.nk, k = r.k;
  if (nk < W) return residual_row_scalar(r);
  // Every key column is independent: vectors over keys, the last one overlapping.
  auto keys = [nk](auto&& f) {
    int64_t j = 0;
    for (; j + W <= nk; j += W) f(j);
    if (j < nk) f(nk - W);
  };
  for (int64_t ox = 0; ox < r.w2; ++ox) {
    for (int64_t c = 0; c < r.h1; ++c) {
      const float* src = r.s + c * r.n1 * nk + (r.oy * k * r.w1 + ox * k) * nk;
      const float* w = r.dw + c * k * k;
      float* ac = r.a + c * nk;
      keys([&](int64_t j) {
        B acc(r.dw_b[c]);
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx)
            acc = vec_fma(B(w[ky * k + kx]), B::load_unaligned(src + (ky * r.w1 + kx) * nk + j), acc);
        acc.store_unaligned(ac + j);
      });
    }
    for (int64_t o = 0; o < r.h2; ++o) {
      float* dst = r.out + (o * r.n2 + r.oy * r.w2 + ox) * nk;
      const float* w = r.pw + o * r.h1;
      const B g(r.gamma[o]);
      keys([&](int64_t j) {
        B acc(r.pw_b[o]);
        for (int64_t c = 0; c < r.h1; ++c) acc = vec_fma(B(w[c]), B::load_unaligned(r.a + c * nk + j), acc);
        (acc * g).store_unaligned(dst + j);
      });
    }
  }
}

template <class A>
LavitSimd make_lavit_table() {
  LavitSimd t;
  t.width = static_cast<int>(VF<A>::size);
  t.gemm_mr = kGemmMr;
  t.gemm_nr = gemm_nr<A>();
  t.softmax_pv = &softmax_pv<A>;
  t.score_block = &score_block<A>;
  t.theta_rows = &theta_rows<A>;
  t.panel_gemm = &panel_gemm<A>;
  t.residual_row = &residual_row<A>;
  return t;
}

}  // namespace lv
}  // namespace
}  // namespace x86
}  // namespace vitrt
