// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The packed GEMM's register tiles, written once over an ISA's vector type (Vec512 / Vec256 below) and
// compiled in packed_gemm_avx512.cpp and packed_gemm_avx2.cpp with their own -m flags.
#include <immintrin.h>

#include <algorithm>

#include "backends/cpu/x86/packed_gemm.h"

namespace vitrt {
namespace x86 {
namespace gemm_impl {

constexpr int64_t kBlockK =
    192;  // K rows of a panel kept in L1 while the row tiles pass (192 × 48 × 4 = 36 KB)

// An ISA's tile: NR = NV vectors, MR rows, so MR × NV accumulators plus NV B vectors and a broadcast fit the
// register file.
template <class T, int R>
inline void tile(const GemmPanel& p, int64_t row0, int64_t k0, int64_t kc, bool first, bool last) {
  using V = typename T::V;
  constexpr int W = T::kWidth, NV = T::kVecs, NR = NV * W;
  const bool partial = p.cols < NR;
  alignas(64) float tmp[R * NR];
  float* c = partial ? tmp : p.c + row0 * p.ldc;
  const int64_t ldc = partial ? NR : p.ldc;
  V acc[R][NV];
  if (first) {
    V bc[NV];
    for (int v = 0; v < NV; ++v) bc[v] = p.bias_cols ? T::load(p.bias_cols + v * W) : T::zero();
    for (int r = 0; r < R; ++r) {
      const V br = p.bias_rows ? T::set1(p.bias_rows[row0 + r]) : T::zero();
      for (int v = 0; v < NV; ++v) acc[r][v] = T::add(bc[v], br);
    }
  } else {
    if (partial)
      for (int r = 0; r < R; ++r)
        for (int64_t j = 0; j < NR; ++j) tmp[r * NR + j] = j < p.cols ? p.c[(row0 + r) * p.ldc + j] : 0.0f;
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = T::loadu(c + r * ldc + v * W);
  }
  const float* a = p.a + row0 * p.lda + k0;
  const float* b = p.b + k0 * NR;
  for (int64_t k = 0; k < kc; ++k) {
    V bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = T::load(b + k * NR + v * W);
    for (int r = 0; r < R; ++r) {
      const V av = T::set1(a[r * p.lda + k]);
      for (int v = 0; v < NV; ++v) acc[r][v] = T::fma(av, bv[v], acc[r][v]);
    }
  }
  if (last && p.relu)
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = T::max(acc[r][v], T::zero());
  if (last && p.residual && !partial)
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v)
        acc[r][v] = T::add(acc[r][v], T::loadu(p.residual + (row0 + r) * p.ldr + v * W));
  const bool stream = last && p.stream && !partial && (reinterpret_cast<uintptr_t>(c) | (ldc * 4)) % 64 == 0;
  if (stream) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) T::stream(c + r * ldc + v * W, acc[r][v]);
  } else {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) T::storeu(c + r * ldc + v * W, acc[r][v]);
  }
  if (partial) {
    const float* res = last ? p.residual : nullptr;
    for (int r = 0; r < R; ++r)
      for (int64_t j = 0; j < p.cols; ++j)
        p.c[(row0 + r) * p.ldc + j] = tmp[r * NR + j] + (res ? res[(row0 + r) * p.ldr + j] : 0.0f);
  }
}

// rows in [1, R]: the tile of exactly that many rows.
template <class T, int R>
inline void tile_rows(int64_t rows, const GemmPanel& p, int64_t row0, int64_t k0, int64_t kc, bool first,
                      bool last) {
  if constexpr (R > 1) {
    if (rows < R) return tile_rows<T, R - 1>(rows, p, row0, k0, kc, first, last);
  }
  tile<T, R>(p, row0, k0, kc, first, last);
}

template <class T>
void panel(const GemmPanel& p) {
  struct Fence {  // non-temporal stores must be ordered before other threads read C
    bool on;
    ~Fence() {
      if (on) _mm_sfence();
    }
  } fence{p.stream};
  constexpr int MR = T::kRows;
  if (p.k == 0) {  // C = bias only
    for (int64_t k0 = 0; k0 < 1; ++k0)
      for (int64_t i = 0; i < p.m; i += MR)
        tile_rows<T, MR>(std::min<int64_t>(MR, p.m - i), p, i, 0, 0, true, true);
    return;
  }
  for (int64_t k0 = 0; k0 < p.k; k0 += kBlockK) {
    const int64_t kc = std::min(kBlockK, p.k - k0);
    const bool first = k0 == 0, last = k0 + kc == p.k;
    for (int64_t i = 0; i < p.m; i += MR)
      tile_rows<T, MR>(std::min<int64_t>(MR, p.m - i), p, i, k0, kc, first, last);
  }
}

}  // namespace gemm_impl
}  // namespace x86
}  // namespace vitrt
