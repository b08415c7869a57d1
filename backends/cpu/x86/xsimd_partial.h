// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A row's last partial vector for the kernels written on xsimd batches (the *_impl.h files of the attention
// ops): loaded into a register padded with a neutral value, stored lane by lane, and the vector max of a
// row. Include it from an ISA-specific _impl.h only: like those, everything is in an anonymous namespace, so
// no function compiled with AVX-512 flags can be merged by the linker into the baseline or AVX2 code.
#include <cmath>
#include <cstdint>
#include <xsimd/xsimd.hpp>

namespace vitrt {
namespace x86 {
namespace {

// The first n (< width) floats of p, the other lanes `fill`.
template <class A>
inline xsimd::batch<float, A> partial_load(const float* p, int64_t n, float fill = 0.0f) {
  using B = xsimd::batch<float, A>;
  alignas(64) float t[B::size];
  for (int64_t i = 0; i < static_cast<int64_t>(B::size); ++i) t[i] = i < n ? p[i] : fill;
  return B::load_aligned(t);
}

// Stores the first n (< width) lanes of x.
template <class A>
inline void partial_store(const xsimd::batch<float, A>& x, float* p, int64_t n) {
  alignas(64) float t[xsimd::batch<float, A>::size];
  x.store_aligned(t);
  for (int64_t i = 0; i < n; ++i) p[i] = t[i];
}

// max over row[0, n) (-inf for n = 0).
template <class A>
float partial_row_max(const float* row, int64_t n) {
  using B = xsimd::batch<float, A>;
  constexpr int64_t W = B::size;
  B best(-INFINITY);
  int64_t j = 0;
  for (; j + W <= n; j += W) best = xsimd::max(best, B::load_unaligned(row + j));
  if (j < n) best = xsimd::max(best, partial_load<A>(row + j, n - j, -INFINITY));
  alignas(64) float t[W];
  best.store_aligned(t);
  float m = t[0];
  for (int64_t i = 1; i < W; ++i) m = t[i] > m ? t[i] : m;
  return m;
}

}  // namespace
}  // namespace x86
}  // namespace vitrt
