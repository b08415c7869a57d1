// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The flash-attention loops of flash_attention.h, written once on xsimd batches and instantiated per ISA
// (flash_attention_avx512.cpp, flash_attention_avx2.cpp). Everything lives in an anonymous namespace so that
// no inline function compiled with AVX-512 flags can be merged by the linker into the AVX2 or baseline code.
//
// Both products run on fma_tile.h's broadcast tile of kRows rows: S = Q·Kᵀ against one packed Kᵀ panel of
// nr keys (kRows x nr accumulators: 6 x 64 at AVX-512, 6 x 16 at AVX2, as the packed GEMM's tiles; the last
// panel of a head may be narrower, a multiple of 16), and O +=
// P·V against kPvKeys rows of the packed V at a time, every row tile and column group passing over those
// rows while they are in L1.
#include <cmath>
#include <cstdint>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/flash_attention.h"
#include "backends/cpu/x86/fma_tile.h"
#include "backends/cpu/x86/vec_fma.h"

namespace vitrt {
namespace x86 {
namespace {
namespace fa {

template <class A>
using VF = xsimd::batch<float, A>;

constexpr int kRows = 6;         // query rows per register tile
constexpr int64_t kPvKeys = 64;  // V rows per P·V step (64 x 64 floats: 16 KB)

// Vectors per tile row: 4 (AVX-512) or 2 (AVX2), so kRows x that many accumulators, the loaded vectors and
// a broadcast fit the register file.
template <class A>
constexpr int tile_vectors() {
  return VF<A>::size == 16 ? 4 : 2;
}

template <class A>
constexpr int64_t panel_keys() {
  return tile_vectors<A>() * static_cast<int64_t>(VF<A>::size);
}

template <class A>
inline float hmax(const VF<A>& v) {
  alignas(64) float t[VF<A>::size];
  v.store_aligned(t);
  float m = t[0];
  for (std::size_t i = 1; i < VF<A>::size; ++i) m = t[i] > m ? t[i] : m;
  return m;
}

template <class A>
void pack(const FlashPack& p) {
  constexpr int64_t NR = panel_keys<A>();
  const int64_t d = p.d, dp = flash_up(d, 16);
  for (int64_t j = p.j0; j < p.j1; ++j) {
    const int64_t panel = j / NR, w = p.nkp - panel * NR < NR ? p.nkp - panel * NR : NR;
    float* kd = p.kp + panel * NR * d + j % NR;  // column j % NR of the panel [d][w]
    if (j < p.nk) {
      const float* kr = p.k + j * p.k_stride;
      for (int64_t t = 0; t < d; ++t) kd[t * w] = kr[t];
    } else {
      for (int64_t t = 0; t < d; ++t) kd[t * w] = 0.0f;
    }
    if (!p.vp) continue;
    float* vd = p.vp + j * dp;
    int64_t t = 0;
    if (j < p.nk)
      for (const float* vr = p.v + j * p.v_stride; t < d; ++t) vd[t] = vr[t];
    for (; t < dp; ++t) vd[t] = 0.0f;
  }
}

// s[r][0..NV·W) = scale · Σ_t q[r][t] · panel[t][0..NV·W) for R rows, the panel NV vectors wide.
template <class A, int R, int NV>
inline void score_tile(const float* q, int64_t qs, const float* panel, int64_t d, float scale, float* s,
                       int64_t ss) {
  using B = VF<A>;
  constexpr int W = B::size;
  B acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = B(0.0f);
  fma_tile<XsimdOps<A>, R, NV>(acc, q, qs, 1, panel, NV * W, d);
  const B sc(scale);
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) (acc[r][v] * sc).store_unaligned(s + r * ss + v * W);
}

// The tile of exactly `rows` (1..R) rows and `nv` (1..NV) vectors.
template <class A, int R, int NV>
inline void score_panel(int64_t rows, int64_t nv, const float* q, int64_t qs, const float* panel, int64_t d,
                        float scale, float* s, int64_t ss) {
  if constexpr (NV > 1) {
    if (nv < NV) return score_panel<A, R, NV - 1>(rows, nv, q, qs, panel, d, scale, s, ss);
  }
  if constexpr (R > 1) {
    if (rows < R) return score_panel<A, R - 1, NV>(rows, nv, q, qs, panel, d, scale, s, ss);
  }
  score_tile<A, R, NV>(q, qs, panel, d, scale, s, ss);
}

// o[r][0..NV·W) += Σ_j p[r][j] · v[j·vs + 0..NV·W) over n keys, R rows of o, dp apart.
template <class A, int R, int NV>
inline void pv_tile(const float* p, int64_t ps, const float* v, int64_t vs, int64_t n, float* o, int64_t dp) {
  using B = VF<A>;
  constexpr int W = B::size;
  B acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < NV; ++c) acc[r][c] = B::load_unaligned(o + r * dp + c * W);
  fma_tile<XsimdOps<A>, R, NV>(acc, p, ps, 1, v, vs, n);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < NV; ++c) acc[r][c].store_unaligned(o + r * dp + c * W);
}

// All dp columns (a multiple of the vector width) in groups of NV vectors, the rest in narrower groups.
template <class A, int R, int NV>
inline void pv_cols(const float* p, int64_t ps, const float* v, int64_t vs, int64_t n, float* o, int64_t dp,
                    int64_t c0) {
  constexpr int64_t G = NV * static_cast<int64_t>(VF<A>::size);
  int64_t c = c0;
  for (; c + G <= dp; c += G) pv_tile<A, R, NV>(p, ps, v + c, vs, n, o + c, dp);
  if constexpr (NV > 1) {
    if (c < dp) pv_cols<A, R, NV - 1>(p, ps, v, vs, n, o, dp, c);
  }
}

template <class A, int R>
inline void pv_rows(int64_t rows, const float* p, int64_t ps, const float* v, int64_t vs, int64_t n, float* o,
                    int64_t dp) {
  if constexpr (R > 1) {
    if (rows < R) return pv_rows<A, R - 1>(rows, p, ps, v, vs, n, o, dp);
  }
  pv_cols<A, R, tile_vectors<A>()>(p, ps, v, vs, n, o, dp, 0);
}

template <class A>
void block(const FlashBlock& f) {
  using B = VF<A>;
  constexpr int64_t W = B::size, NR = panel_keys<A>();
  const int64_t d = f.d, dp = flash_up(d, 16), rows = f.rows, kb = f.kb;
  float* s = f.scratch;                    // [rows][kb]
  float* o = s + flash_up(rows * kb, 16);  // [rows][dp]
  float* m = o + rows * dp;                // [rows]
  float* l = m + flash_up(rows, 16);       // [rows]
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < rows * dp; ++i) o[i] = 0.0f;
  for (int64_t i = 0; i < rows; ++i) {
    m[i] = ninf;
    l[i] = 0.0f;
  }
  for (int64_t j0 = 0; j0 < f.nk; j0 += kb) {
    const int64_t n = f.nk - j0 < kb ? f.nk - j0 : kb;
    const int64_t np = flash_up(n, 16);
    // Scores, one Kᵀ panel at a time: every row tile passes over it while it is in L1.
    for (int64_t pj = 0; pj < np; pj += NR) {
      const float* panel = f.kp + (j0 + pj) * d;  // panel (j0 + pj) / NR; those before it are NR wide
      const int64_t nv = (np - pj < NR ? np - pj : NR) / W;
      for (int64_t i = 0; i < rows; i += kRows)
        score_panel<A, kRows, tile_vectors<A>()>(rows - i, nv, f.q + i * f.q_stride, f.q_stride, panel, d,
                                                 f.scale, s + i * kb + pj, kb);
    }
    // Online softmax: P = exp(S - m_new), the running sums and outputs rescaled by exp(m_old - m_new).
    for (int64_t i = 0; i < rows; ++i) {
      float* sr = s + i * kb;
      for (int64_t jj = n; jj < np; ++jj) sr[jj] = ninf;
      B mx = B::load_unaligned(sr);
      for (int64_t jj = W; jj < np; jj += W) mx = xsimd::max(mx, B::load_unaligned(sr + jj));
      const float bm = hmax<A>(mx);
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
        float* orow = o + i * dp;
        const B cv(corr);
        for (int64_t c = 0; c < dp; c += W) (B::load_unaligned(orow + c) * cv).store_unaligned(orow + c);
      }
      l[i] += xsimd::hadd(sum);
      m[i] = mnew;
    }
    // O += P·V, kPvKeys rows of V at a time.
    for (int64_t c0 = 0; c0 < n; c0 += kPvKeys) {
      const int64_t cn = n - c0 < kPvKeys ? n - c0 : kPvKeys;
      const float* vb = f.v + (j0 + c0) * f.v_stride;
      for (int64_t i = 0; i < rows; i += kRows)
        pv_rows<A, kRows>(rows - i, s + i * kb + c0, kb, vb, f.v_stride, cn, o + i * dp, dp);
    }
  }
  for (int64_t i = 0; i < rows; ++i) {
    const float r = 1.0f / l[i];
    const float* orow = o + i * dp;
    float* dst = f.out + i * f.out_stride;
    int64_t c = 0;
    const B rv(r);
    for (; c + W <= d; c += W) (B::load_unaligned(orow + c) * rv).store_unaligned(dst + c);
    for (; c < d; ++c) dst[c] = orow[c] * r;
  }
}

template <class A>
FlashSimd make_flash_table() {
  FlashSimd t;
  t.pack = &pack<A>;
  t.block = &block<A>;
  return t;
}

}  // namespace fa
}  // namespace
}  // namespace x86
}  // namespace vitrt
