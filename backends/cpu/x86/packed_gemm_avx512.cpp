// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The packed GEMM's AVX-512 tiles (8 × 48 and 14 × 32); built with -mavx512*, only called when CPUID has
// them.
#include "backends/cpu/x86/packed_gemm_impl.h"

namespace vitrt {
namespace x86 {
namespace {

template <int Rows, int Vecs>
struct Vec512 {
  using V = __m512;
  static constexpr int kWidth = 16, kRows = Rows, kVecs = Vecs;
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_load_ps(p); }
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void stream(float* p, V v) { _mm512_stream_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
};

}  // namespace

const GemmKernels* gemm_kernels_avx512(bool wide) {
  using Wide = Vec512<8, 3>;   // 8 rows × 48 columns: 24 accumulators
  using Tall = Vec512<14, 2>;  // 14 rows × 32 columns: 28 accumulators
  static const GemmKernels w = {"avx512 8x48", 8, 48, &gemm_impl::panel<Wide>};
  static const GemmKernels t = {"avx512 14x32", 14, 32, &gemm_impl::panel<Tall>};
  return wide ? &w : &t;
}

}  // namespace x86
}  // namespace vitrt
