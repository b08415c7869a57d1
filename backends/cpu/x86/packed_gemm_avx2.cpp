// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The packed GEMM's AVX2 tiles (6 rows × 16 columns); built with -mavx2 -mfma.
#include "backends/cpu/x86/packed_gemm_impl.h"

namespace vitrt {
namespace x86 {
namespace {

struct Vec256 {
  using V = __m256;
  static constexpr int kWidth = 8, kRows = 6, kVecs = 2;
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_load_ps(p); }
  static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void stream(float* p, V v) { _mm256_stream_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
};

}  // namespace

const GemmKernels* gemm_kernels_avx2(bool) {
  static const GemmKernels k = {"avx2 6x16", Vec256::kRows, Vec256::kVecs * Vec256::kWidth,
                                &gemm_impl::panel<Vec256>};
  return &k;
}

}  // namespace x86
}  // namespace vitrt
