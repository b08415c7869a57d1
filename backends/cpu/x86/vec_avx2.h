// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// One AVX2 register of floats and the operations the register-tiled kernels (packed GEMM, channels-last
// depthwise conv) and the vector GELU (gelu_vec_impl.h) are written over. Include only from *_avx2.cpp files
// (built with -mavx2 -mfma); the anonymous namespace keeps each file's copy apart from other ISA levels'.
#include <immintrin.h>

namespace vitrt {
namespace x86 {
namespace {

struct Avx2Ops {
  using V = __m256;
  static constexpr int kWidth = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_load_ps(p); }
  static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm256_storeu_ps(p, v); }
  // The first n (0..8) floats; the rest read as zero, or are left untouched.
  static __m256i mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V loadn(const float* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
  static void storen(float* p, V v, int n) { _mm256_maskstore_ps(p, mask(n), v); }
  static void stream(float* p, V v) { _mm256_stream_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V pow2n(V n) {  // n integral in [-127, 127]
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  static V rcp(V d) { return _mm256_div_ps(_mm256_set1_ps(1.0f), d); }
  static V select_neg(V x, V if_neg, V otherwise) { return _mm256_blendv_ps(otherwise, if_neg, x); }
};

}  // namespace
}  // namespace x86
}  // namespace vitrt
