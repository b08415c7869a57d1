// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// NystromAttention's vector loops (nystrom_attention_simd.h), written once on xsimd batches and instantiated
// per ISA (nystrom_attention_avx512.cpp, nystrom_attention_avx2.cpp). Everything lives in an anonymous
// namespace so that no inline function compiled with AVX-512 flags can be merged by the linker into the
// baseline or AVX2 code.
#include <cmath>
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/nystrom_attention_simd.h"
#include "backends/cpu/x86/xsimd_partial.h"

// GCC 12 reports the deliberately undefined source operand of its own AVX-512 intrinsics (reached through
// xsimd::exp) as uninitialised once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace vitrt {
namespace x86 {
namespace {

template <class A>
using NyVec = xsimd::batch<float, A>;

template <class A>
float ny_exp_sum(float* row, int64_t n, float max) {
  using B = NyVec<A>;
  constexpr int64_t W = B::size;
  const B mv(max);
  B acc(0.0f);
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    const B e = xsimd::exp(B::load_unaligned(row + j) - mv);
    e.store_unaligned(row + j);
    acc += e;
  }
  if (j < n) {
    // Padding lanes at −∞ give exp 0 and add nothing.
    alignas(64) float t[W];
    const B e = xsimd::exp(partial_load<A>(row + j, n - j, -INFINITY) - mv);
    e.store_aligned(t);
    for (int64_t i = 0; i < n - j; ++i) row[j + i] = t[i];
    acc += e;
  }
  return xsimd::hadd(acc);
}

template <class A>
void ny_scale(float* row, int64_t n, float s) {
  using B = NyVec<A>;
  constexpr int64_t W = B::size;
  const B sv(s);
  int64_t j = 0;
  for (; j + W <= n; j += W) (B::load_unaligned(row + j) * sv).store_unaligned(row + j);
  for (; j < n; ++j) row[j] *= s;
}

// Plain loops: compiled in each ISA's translation unit, the compiler vectorises them at its width (each lane
// on its own, so the bits are the scalar loop's).
template <class A>
void ny_scaled_sum(const float* row, int64_t n, float s, double* sum) {
  for (int64_t j = 0; j < n; ++j) sum[j] += static_cast<double>(row[j] * s);
}

template <class A>
void ny_scaled_copy(const float* src, int64_t n, float s, float* dst) {
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j] * s;
}

template <class A>
NystromSimd make_nystrom_simd(const char* name) {
  NystromSimd t;
  t.name = name;
  t.row_max = &partial_row_max<A>;
  t.exp_sum = &ny_exp_sum<A>;
  t.scale = &ny_scale<A>;
  t.scaled_sum = &ny_scaled_sum<A>;
  t.scaled_copy = &ny_scaled_copy<A>;
  return t;
}

}  // namespace
}  // namespace x86
}  // namespace vitrt

#pragma GCC diagnostic pop
