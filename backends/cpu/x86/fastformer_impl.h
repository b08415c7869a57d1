// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// FastformerAttention's inner loops (fastformer_simd.h), written once on xsimd batches and instantiated per
// ISA (fastformer_avx512.cpp, fastformer_avx2.cpp). Everything lives in an anonymous namespace so that no
// inline function compiled with AVX-512 flags can be merged by the linker into the baseline or AVX2 code.
// Each loop streams its rows once; channels past the last whole vector run as scalars.
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/fastformer_simd.h"

namespace vitrt {
namespace x86 {
namespace {

template <class A>
using FfVec = xsimd::batch<float, A>;

// Scores of the H heads [h0, h0 + H) for one token: one vector accumulator per head over the channels; the
// token's channels are first multiplied by mul when Mul is set (k∘p).
template <class A, int H, bool Mul>
inline void ff_scores_heads(const float* x, int64_t c, const float* mul, const float* w, const float* bias,
                            int64_t h0, float scale, float* s) {
  using B = FfVec<A>;
  constexpr int W = B::size;
  B acc[H];
  for (int h = 0; h < H; ++h) acc[h] = B(0.0f);
  int64_t j = 0;
  for (; j + W <= c; j += W) {
    B xv = B::load_unaligned(x + j);
    if (Mul) xv = xv * B::load_unaligned(mul + j);
    for (int h = 0; h < H; ++h) acc[h] = xsimd::fma(B::load_unaligned(w + (h0 + h) * c + j), xv, acc[h]);
  }
  for (int h = 0; h < H; ++h) {
    float sum = xsimd::hadd(acc[h]);
    for (int64_t t = j; t < c; ++t) sum += w[(h0 + h) * c + t] * (Mul ? x[t] * mul[t] : x[t]);
    s[h0 + h] = scale * (bias[h0 + h] + sum);
  }
}

template <class A, bool Mul>
void ff_scores_rows(const float* x, int64_t rows, int64_t c, const float* mul, const float* w,
                    const float* bias, int64_t heads, float scale, float* s) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* sr = s + r * heads;
    int64_t h = 0;
    for (; h + 4 <= heads; h += 4) ff_scores_heads<A, 4, Mul>(xr, c, mul, w, bias, h, scale, sr);
    switch (heads - h) {
      case 3:
        ff_scores_heads<A, 3, Mul>(xr, c, mul, w, bias, h, scale, sr);
        break;
      case 2:
        ff_scores_heads<A, 2, Mul>(xr, c, mul, w, bias, h, scale, sr);
        break;
      case 1:
        ff_scores_heads<A, 1, Mul>(xr, c, mul, w, bias, h, scale, sr);
        break;
      default:
        break;
    }
  }
}

template <class A>
void ff_scores(const float* x, int64_t rows, int64_t c, const float* mul, const float* w, const float* bias,
               int64_t heads, float scale, float* s) {
  if (mul)
    ff_scores_rows<A, true>(x, rows, c, mul, w, bias, heads, scale, s);
  else
    ff_scores_rows<A, false>(x, rows, c, mul, w, bias, heads, scale, s);
}

template <class A>
void ff_pool(const float* x, int64_t rows, int64_t c, int64_t d, const float* e, int64_t heads, float* acc) {
  using B = FfVec<A>;
  constexpr int W = B::size;
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t c0 = h * d, c1 = c0 + d;
    int64_t j = c0;
    // Two vectors of channels at a time, summed over the block's tokens in registers.
    for (; j + 2 * W <= c1; j += 2 * W) {
      B a0 = B::load_unaligned(acc + j), a1 = B::load_unaligned(acc + j + W);
      for (int64_t r = 0; r < rows; ++r) {
        const B ev(e[r * heads + h]);
        a0 = xsimd::fma(ev, B::load_unaligned(x + r * c + j), a0);
        a1 = xsimd::fma(ev, B::load_unaligned(x + r * c + j + W), a1);
      }
      a0.store_unaligned(acc + j);
      a1.store_unaligned(acc + j + W);
    }
    for (; j + W <= c1; j += W) {
      B a0 = B::load_unaligned(acc + j);
      for (int64_t r = 0; r < rows; ++r)
        a0 = xsimd::fma(B(e[r * heads + h]), B::load_unaligned(x + r * c + j), a0);
      a0.store_unaligned(acc + j);
    }
    for (; j < c1; ++j) {
      float a = acc[j];
      for (int64_t r = 0; r < rows; ++r) a += e[r * heads + h] * x[r * c + j];
      acc[j] = a;
    }
  }
}

template <class A>
void ff_scale_rows(const float* x, int64_t rows, int64_t c, const float* g, float* dst) {
  using B = FfVec<A>;
  constexpr int W = B::size;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* dr = dst + r * c;
    int64_t j = 0;
    for (; j + W <= c; j += W) (B::load_unaligned(xr + j) * B::load_unaligned(g + j)).store_unaligned(dr + j);
    for (; j < c; ++j) dr[j] = xr[j] * g[j];
  }
}

template <class A>
FastformerSimd make_fastformer_simd(const char* name) {
  return FastformerSimd{name, static_cast<int>(FfVec<A>::size), &ff_scores<A>, &ff_pool<A>,
                        &ff_scale_rows<A>};
}

}  // namespace
}  // namespace x86
}  // namespace vitrt
