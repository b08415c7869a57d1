// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// LinearAttention's inner loops (linear_attention_simd.h), written once on xsimd batches and instantiated per
// ISA (linear_attention_avx512.cpp, linear_attention_avx2.cpp). Everything lives in an anonymous namespace so
// that no inline function compiled with AVX-512 flags can be merged by the linker into the baseline or AVX2
// code.
//
// Each loop is a register tile of R rows × V vectors of output columns: one accumulator per output element,
// the terms added in the reference's order with FMA, so only the rounding of a·b + acc differs from the
// reference.
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/fma_tile.h"
#include "backends/cpu/x86/linear_attention_simd.h"
#include "backends/cpu/x86/vec_fma.h"
#include "backends/cpu/x86/xsimd_partial.h"

// GCC 12 reports the deliberately undefined source operand of its own AVX-512 intrinsics (`__m512 __Y =
// __Y;`, reached through xsimd::exp) as uninitialised once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace vitrt {
namespace x86 {
namespace {

template <class A>
using LaVec = xsimd::batch<float, A>;

// Vectors per tile column block: 4 zmm or 2 ymm keep R·V accumulators plus the operands in registers.
template <class A>
constexpr int la_max_vectors() {
  return LaVec<A>::size == 16 ? 4 : 2;
}

// ---- c (+)= a·b ----

template <class A, int R, int V>
inline void la_gemm_tile(const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb, int64_t k,
                         bool accumulate, float* c, int64_t ldc) {
  using B = LaVec<A>;
  constexpr int W = B::size;
  B acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = accumulate ? B::load_unaligned(c + r * ldc + v * W) : B(0.0f);
  fma_tile<XsimdOps<A>, R, V>(acc, a, ars, acs, b, ldb, k);
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v].store_unaligned(c + r * ldc + v * W);
}

// The last nv (< V + 1) vectors of a column block.
template <class A, int R, int V>
inline void la_gemm_tail(int64_t nv, const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb,
                         int64_t k, bool accumulate, float* c, int64_t ldc) {
  if constexpr (V > 0) {
    if (nv == V)
      la_gemm_tile<A, R, V>(a, ars, acs, b, ldb, k, accumulate, c, ldc);
    else
      la_gemm_tail<A, R, V - 1>(nv, a, ars, acs, b, ldb, k, accumulate, c, ldc);
  }
}

template <class A, int R>
inline void la_gemm_rows(const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb, int64_t k,
                         int64_t cols, bool accumulate, float* c, int64_t ldc) {
  constexpr int W = LaVec<A>::size, VM = la_max_vectors<A>();
  int64_t j = 0;
  for (; j + VM * W <= cols; j += VM * W)
    la_gemm_tile<A, R, VM>(a, ars, acs, b + j, ldb, k, accumulate, c + j, ldc);
  if (j < cols)
    la_gemm_tail<A, R, VM - 1>((cols - j) / W, a, ars, acs, b + j, ldb, k, accumulate, c + j, ldc);
}

template <class A, int R>
inline void la_gemm_row_tail(int64_t nr, const float* a, int64_t ars, int64_t acs, const float* b,
                             int64_t ldb, int64_t k, int64_t cols, bool accumulate, float* c, int64_t ldc) {
  if constexpr (R > 0) {
    if (nr == R)
      la_gemm_rows<A, R>(a, ars, acs, b, ldb, k, cols, accumulate, c, ldc);
    else
      la_gemm_row_tail<A, R - 1>(nr, a, ars, acs, b, ldb, k, cols, accumulate, c, ldc);
  }
}

template <class A>
void la_gemm(const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb, int64_t rows, int64_t k,
             int64_t cols, bool accumulate, float* c, int64_t ldc) {
  constexpr int R = 6;  // 6 rows × 4 zmm (or 2 ymm) accumulators: loads amortised, no spills
  int64_t i = 0;
  for (; i + R <= rows; i += R)
    la_gemm_rows<A, R>(a + i * ars, ars, acs, b, ldb, k, cols, accumulate, c + i * ldc, ldc);
  if (i < rows)
    la_gemm_row_tail<A, R - 1>(rows - i, a + i * ars, ars, acs, b, ldb, k, cols, accumulate, c + i * ldc,
                               ldc);
}

// ---- Gaussian kernel, direct difference form ----

template <class A, int R, int V>
inline void la_gauss_tile(const float* a, int64_t ars, int64_t acs, float scale, const float* bt, int64_t ldb,
                          int64_t d, float* c, int64_t ldc) {
  using B = LaVec<A>;
  constexpr int W = B::size;
  B acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = B(0.0f);
  for (int64_t t = 0; t < d; ++t) {
    B bv[V];
    for (int v = 0; v < V; ++v) bv[v] = B::load_unaligned(bt + t * ldb + v * W);
    for (int r = 0; r < R; ++r) {
      const B av(a[r * ars + t * acs] * scale);  // the reference's scaled Q element, rounded the same way
      for (int v = 0; v < V; ++v) {
        const B diff = av - bv[v];
        acc[r][v] = vec_fma(diff, diff, acc[r][v]);
      }
    }
  }
  const B neg_half(-0.5f);  // −x/2 and x·(−0.5) are the same float
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) xsimd::exp(acc[r][v] * neg_half).store_unaligned(c + r * ldc + v * W);
}

template <class A, int R, int V>
inline void la_gauss_tail(int64_t nv, const float* a, int64_t ars, int64_t acs, float scale, const float* bt,
                          int64_t ldb, int64_t d, float* c, int64_t ldc) {
  if constexpr (V > 0) {
    if (nv == V)
      la_gauss_tile<A, R, V>(a, ars, acs, scale, bt, ldb, d, c, ldc);
    else
      la_gauss_tail<A, R, V - 1>(nv, a, ars, acs, scale, bt, ldb, d, c, ldc);
  }
}

template <class A, int R>
inline void la_gauss_rows(const float* a, int64_t ars, int64_t acs, float scale, const float* bt, int64_t ldb,
                          int64_t d, int64_t cols, float* c, int64_t ldc) {
  constexpr int W = LaVec<A>::size, VM = la_max_vectors<A>();
  int64_t j = 0;
  for (; j + VM * W <= cols; j += VM * W)
    la_gauss_tile<A, R, VM>(a, ars, acs, scale, bt + j, ldb, d, c + j, ldc);
  if (j < cols) la_gauss_tail<A, R, VM - 1>((cols - j) / W, a, ars, acs, scale, bt + j, ldb, d, c + j, ldc);
}

template <class A>
void la_gaussian(const float* a, int64_t ars, int64_t acs, float scale, const float* bt, int64_t ldb,
                 int64_t rows, int64_t d, int64_t cols, int64_t valid, float* c, int64_t ldc) {
  constexpr int R = 4;
  int64_t i = 0;
  for (; i + R <= rows; i += R)
    la_gauss_rows<A, R>(a + i * ars, ars, acs, scale, bt, ldb, d, cols, c + i * ldc, ldc);
  for (; i < rows; ++i) la_gauss_rows<A, 1>(a + i * ars, ars, acs, scale, bt, ldb, d, cols, c + i * ldc, ldc);
  for (i = 0; i < rows; ++i)
    for (int64_t j = valid; j < cols; ++j) c[i * ldc + j] = 0.0f;
}

// ---- landmark conv ----

// R landmarks of one landmark row (consecutive x), V vectors of output channels from j0.
template <class A, int R, int V>
inline void la_lconv_tile(const LandmarkConvArgs& p, const float* q0, int64_t j0, float* lm0) {
  using B = LaVec<A>;
  constexpr int W = B::size;
  const int64_t r = p.r, qs = p.q_stride, step = r * qs;  // step: next landmark's first token
  B acc[R][V];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = B(0.0f);
  const float* w = p.wp + j0;
  for (int64_t c = 0; c < p.d; ++c) {
    for (int64_t ky = 0; ky < r; ++ky) {
      const float* qrow = q0 + ky * p.width * qs + c;
      for (int64_t kx = 0; kx < r; ++kx) {
        const float* wr = w + ((c * r + ky) * r + kx) * p.dp;
        B wv[V];
        for (int v = 0; v < V; ++v) wv[v] = B::load_unaligned(wr + v * W);
        for (int i = 0; i < R; ++i) {
          const B qv(qrow[i * step + kx * qs] * p.scale);
          for (int v = 0; v < V; ++v) acc[i][v] = vec_fma(qv, wv[v], acc[i][v]);
        }
      }
    }
  }
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v].store_unaligned(lm0 + i * p.dp + j0 + v * W);
}

template <class A, int R, int V>
inline void la_lconv_vtail(int64_t nv, const LandmarkConvArgs& p, const float* q0, int64_t j0, float* lm0) {
  if constexpr (V > 0) {
    if (nv == V)
      la_lconv_tile<A, R, V>(p, q0, j0, lm0);
    else
      la_lconv_vtail<A, R, V - 1>(nv, p, q0, j0, lm0);
  }
}

template <class A, int R>
inline void la_lconv_landmarks(const LandmarkConvArgs& p, const float* q0, float* lm0) {
  constexpr int W = LaVec<A>::size, VM = la_max_vectors<A>();
  int64_t j = 0;
  for (; j + VM * W <= p.dp; j += VM * W) la_lconv_tile<A, R, VM>(p, q0, j, lm0);
  if (j < p.dp) la_lconv_vtail<A, R, VM - 1>((p.dp - j) / W, p, q0, j, lm0);
}

template <class A, int R>
inline void la_lconv_rtail(int64_t nr, const LandmarkConvArgs& p, const float* q0, float* lm0) {
  if constexpr (R > 0) {
    if (nr == R)
      la_lconv_landmarks<A, R>(p, q0, lm0);
    else
      la_lconv_rtail<A, R - 1>(nr, p, q0, lm0);
  }
}

template <class A>
void la_landmark_conv(const LandmarkConvArgs& p) {
  constexpr int R = 4;
  for (int64_t y = 0; y < p.m_h; ++y) {
    for (int64_t x = 0; x < p.m_w; x += R) {
      const float* q0 = p.q + (y * p.r * p.width + x * p.r) * p.q_stride;
      float* lm0 = p.lm + (y * p.m_w + x) * p.dp;
      if (x + R <= p.m_w)
        la_lconv_landmarks<A, R>(p, q0, lm0);
      else
        la_lconv_rtail<A, R - 1>(p.m_w - x, p, q0, lm0);
    }
  }
}

// ---- V conv + attention result -> output ----

// P consecutive tokens of one image row from token i (at y, x), V vectors of channels from j0. Interior:
// every tap of every token is inside the image horizontally (only the vertical bound is checked).
template <class A, int P, int V, bool Interior>
inline void la_vconv_tile(const VConvArgs& a, int64_t i, int64_t y, int64_t x, int64_t j0) {
  using B = LaVec<A>;
  constexpr int W = B::size;
  const int64_t k = a.k, pad = k / 2, dp = a.dp;
  B acc[P][V];
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < V; ++v) acc[p][v] = B(0.0f);
  for (int64_t ky = 0; ky < k; ++ky) {
    const int64_t iy = y + ky - pad;
    if (iy < 0 || iy >= a.height) continue;
    const float* row = a.v + iy * a.width * dp + j0;
    for (int64_t kx = 0; kx < k; ++kx) {
      const int64_t ix = x + kx - pad;
      if (!Interior && (ix < 0 || ix >= a.width)) continue;
      const B wv(a.w[ky * k + kx]);
      const float* src = row + ix * dp;
      for (int p = 0; p < P; ++p)
        for (int v = 0; v < V; ++v)
          acc[p][v] = vec_fma(wv, B::load_unaligned(src + p * dp + v * W), acc[p][v]);
    }
  }
  for (int p = 0; p < P; ++p) {
    const float* at = a.attn + (i - a.i0 + p) * dp + j0;
    float* o = a.out + (i - a.i0 + p) * a.out_stride + j0;
    for (int v = 0; v < V; ++v) {
      const B res = B::load_unaligned(at + v * W) + acc[p][v];
      const int64_t left = a.d - j0 - v * W;
      if (left >= W)
        res.store_unaligned(o + v * W);
      else
        partial_store<A>(res, o + v * W, left);
    }
  }
}

template <class A, int P, int V, bool Interior>
inline void la_vconv_tail(int64_t nv, const VConvArgs& a, int64_t i, int64_t y, int64_t x, int64_t j0) {
  if constexpr (V > 0) {
    if (nv == V)
      la_vconv_tile<A, P, V, Interior>(a, i, y, x, j0);
    else
      la_vconv_tail<A, P, V - 1, Interior>(nv, a, i, y, x, j0);
  }
}

template <class A, int P, bool Interior>
inline void la_vconv_tokens(const VConvArgs& a, int64_t i, int64_t y, int64_t x) {
  constexpr int W = LaVec<A>::size, VM = la_max_vectors<A>();
  int64_t j = 0;
  for (; j + VM * W <= a.dp; j += VM * W) la_vconv_tile<A, P, VM, Interior>(a, i, y, x, j);
  if (j < a.dp) la_vconv_tail<A, P, VM - 1, Interior>((a.dp - j) / W, a, i, y, x, j);
}

template <class A>
void la_v_conv_add(const VConvArgs& a) {
  constexpr int P = 4;
  const int64_t pad = a.k / 2;
  for (int64_t i = a.i0; i < a.i1;) {
    const int64_t y = i / a.width, x = i % a.width;
    const int64_t run = a.i1 - i < a.width - x ? a.i1 - i : a.width - x;  // tokens left in this image row
    if (run >= P && x >= pad && x + P - 1 + pad < a.width) {
      la_vconv_tokens<A, P, true>(a, i, y, x);
      i += P;
    } else {
      la_vconv_tokens<A, 1, false>(a, i, y, x);
      ++i;
    }
  }
}

// ---- Newton–Schulz steps ----

template <class A>
void la_newton_iterate(const float* p, int64_t m, int64_t mp, int32_t iterations, float* v, float* work) {
  using B = LaVec<A>;
  constexpr int64_t W = B::size;
  float* vp = work;            // V·P
  float* vpv = work + m * mp;  // (V·P)·V
  const B two(2.0f);
  for (int32_t it = 0; it < iterations; ++it) {
    la_gemm<A>(v, mp, 1, p, mp, m, m, mp, false, vp, mp);
    la_gemm<A>(vp, mp, 1, v, mp, m, m, mp, false, vpv, mp);
    for (int64_t i = 0; i < m * mp; i += W)  // 2·v is exact, so a fused 2·v − vpv rounds the same
      (two * B::load_unaligned(v + i) - B::load_unaligned(vpv + i)).store_unaligned(v + i);
  }
}

template <class A>
LinearAttentionSimd make_linear_attention_simd(const char* name) {
  LinearAttentionSimd t;
  t.name = name;
  t.width = static_cast<int>(LaVec<A>::size);
  t.gemm = &la_gemm<A>;
  t.gaussian = &la_gaussian<A>;
  t.landmark_conv = &la_landmark_conv<A>;
  t.v_conv_add = &la_v_conv_add<A>;
  t.newton_iterate = &la_newton_iterate<A>;
  return t;
}

}  // namespace
}  // namespace x86
}  // namespace vitrt

#pragma GCC diagnostic pop
