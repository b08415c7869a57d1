// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// SelectiveKernel's inner loop (selective_kernel_simd.h), written once on xsimd batches and instantiated per
// ISA (selective_kernel_avx512.cpp, selective_kernel_avx2.cpp). In an anonymous namespace so that no inline
// function compiled with AVX-512 flags can be merged by the linker into the baseline or AVX2 code.
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/selective_kernel_simd.h"
#include "backends/cpu/x86/vec_fma.h"

namespace vitrt {
namespace x86 {
namespace {

template <class A>
void sk_weighted_sum(const float* const* src, const float* w, int64_t w_stride, int m, float* dst,
                     int64_t n) {
  using B = xsimd::batch<float, A>;
  constexpr int64_t W = B::size;
  int64_t p = 0;
  // Two vectors per step: each branch's weight is broadcast once per pair of loads.
  for (; p + 2 * W <= n; p += 2 * W) {
    const B w0(w[0]);
    B a0 = w0 * B::load_unaligned(src[0] + p), a1 = w0 * B::load_unaligned(src[0] + p + W);
    for (int i = 1; i < m; ++i) {
      const B wi(w[i * w_stride]);
      a0 = vec_fma(wi, B::load_unaligned(src[i] + p), a0);
      a1 = vec_fma(wi, B::load_unaligned(src[i] + p + W), a1);
    }
    a0.store_unaligned(dst + p);
    a1.store_unaligned(dst + p + W);
  }
  for (; p + W <= n; p += W) {
    B a0 = B(w[0]) * B::load_unaligned(src[0] + p);
    for (int i = 1; i < m; ++i) a0 = vec_fma(B(w[i * w_stride]), B::load_unaligned(src[i] + p), a0);
    a0.store_unaligned(dst + p);
  }
  for (; p < n; ++p) {
    float acc = w[0] * src[0][p];
    for (int i = 1; i < m; ++i) acc = __builtin_fmaf(w[i * w_stride], src[i][p], acc);
    dst[p] = acc;
  }
}

template <class A>
SelectiveKernelSimd make_selective_kernel_simd(const char* name) {
  SelectiveKernelSimd t;
  t.name = name;
  t.weighted_sum = &sk_weighted_sum<A>;
  return t;
}

}  // namespace
}  // namespace x86
}  // namespace vitrt
