// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// One AVX-512 register of floats and the operations the register-tiled kernels (packed GEMM, channels-last
// depthwise conv) and the vector GELU (gelu_vec_impl.h) are written over. Include only from *_avx512.cpp
// files (built with -mavx512*); the anonymous namespace keeps each file's copy apart from other ISA levels'.
#include <immintrin.h>

namespace vitrt {
namespace x86 {
namespace {

struct Avx512Ops {
  using V = __m512;
  static constexpr int kWidth = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_load_ps(p); }
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm512_storeu_ps(p, v); }
  // The first n (0..16) floats; the rest read as zero, or are left untouched.
  static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1); }
  static V loadn(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void storen(float* p, V v, int n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static void stream(float* p, V v) { _mm512_stream_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V abs(V a) { return _mm512_abs_ps(a); }
  static V round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V pow2n(V n) { return _mm512_scalef_ps(_mm512_set1_ps(1.0f), n); }
  static V rcp(V d) {  // 14-bit estimate and one Newton step
    const V r = _mm512_rcp14_ps(d);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
  }
  static V select_neg(V x, V if_neg, V otherwise) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), otherwise, if_neg);
  }
};

}  // namespace
}  // namespace x86
}  // namespace vitrt
