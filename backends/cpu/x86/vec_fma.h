// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// vec_fma(a, b, c): a·b + c rounded once, for the xsimd batches of every ISA the backend compiles. Every x86
// inner loop that promises the reference's bits ("one FMA per term") multiplies through it.
//
// Why not xsimd::fma: xsimd 10 (Debian bookworm) specialises fma for FMA3 (AVX2) but not for AVX-512, where
// it falls back to `x * y + z`, a single FMA only where the compiler contracts the expression. GCC does at
// -O3, but not everywhere under -fsanitize, whose instrumentation splits the expression: the AVX-512 kernels'
// bits then depended on the build (the sanitized build's packed-GEMM and row-loop Newton steps disagreed in
// the last bits; docs/limits.md, "Sanitizers"). Here AVX-512 batches call the intrinsic.
//
// In an anonymous namespace, like the *_impl.h files that include it: each ISA's translation unit, built with
// its own -m flags, gets its own copy.
#include <immintrin.h>

#include <xsimd/xsimd.hpp>

namespace vitrt {
namespace x86 {
namespace {

template <class A>
__attribute__((always_inline)) inline xsimd::batch<float, A> vec_fma(const xsimd::batch<float, A>& a,
                                                                     const xsimd::batch<float, A>& b,
                                                                     const xsimd::batch<float, A>& c) {
#ifdef __AVX512F__
  if constexpr (xsimd::batch<float, A>::size == 16) {
    return _mm512_fmadd_ps(a, b, c);
  } else
#endif
  {
    return xsimd::fma(a, b, c);
  }
}

}  // namespace
}  // namespace x86
}  // namespace vitrt
