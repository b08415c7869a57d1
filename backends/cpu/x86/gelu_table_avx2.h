// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// GELU, erf form, on one AVX2 register from a table of piecewise polynomials instead of an erf and an exp:
// the AVX-512 table's method (gelu_table_avx512.h) sized for AVX2's one-register permute. GELU(x) = x/2 +
// |x|·g(|x|) with g(a) = erf(a/√2)/2, and g on 8 intervals of width 7/8 centred on n·7/8 (n = round(a·8/7),
// t = a·8/7 − n in [−1/2, 1/2]) a degree-7 polynomial in t whose coefficients one vpermps per power picks
// from 8-entry tables; a ≥ 5.6875 (past which erf(a/√2) is within 1.3e-8 of 1) takes the constant 1/2. About
// 22 instructions against gelu_vec::gelu_erf's 33 (division, erfc polynomial and exp). Accuracy
// (tools/fit_gelu_table.py avx2, which fits the table; tests/x86/gelu_table_x86_test.cpp): erf within 8.7e-8
// absolute and 1.8e-7 relative, the GELU within 8.7e-8·|x| — below gelu_vec::gelu_erf's 1.5e-7 on erf and
// the 1.1e-7·|x| of the float formula x/2·(1 + erf(x/√2)) that PyTorch and the reference compute. Like that
// formula, GELU(+inf) = +inf and GELU(−inf) = NaN (−inf·0); NaN stays NaN. Include only from *_avx2.cpp files
// (built with -mavx2 -mfma).
#include <immintrin.h>

#include "backends/cpu/x86/vec_avx2.h"

namespace vitrt {
namespace x86 {
namespace {

namespace gelu_table_avx2 {

// kCoef[k][n]: the coefficient of t^k on interval n (tools/fit_gelu_table.py avx2 prints them).
alignas(32) constexpr float kCoef[8][8] = {
    {0.000000000e+00f, 3.092130423e-01f, 4.599408507e-01f, 4.956675470e-01f, 4.997673631e-01f,
     4.999939203e-01f, 4.999999106e-01f, 5.000000000e-01f},  // t^0
    {3.490744829e-01f, 2.380481213e-01f, 7.549265027e-02f, 1.113365870e-02f, 7.635976071e-04f,
     2.435476017e-05f, 3.612345267e-07f, 0.000000000e+00f},  // t^1
    {0.000000000e+00f, -9.112751484e-02f, -5.779929832e-02f, -1.278625801e-02f, -1.169244410e-03f,
     -4.662147330e-05f, -8.303117625e-07f, 0.000000000e+00f},  // t^2
    {-4.454322904e-02f, -7.119526621e-03f, 1.986846328e-02f, 8.368840441e-03f, 1.096166787e-03f,
     5.637799768e-05f, 1.224778430e-06f, 0.000000000e+00f},  // t^3
    {0.000000000e+00f, 1.298531331e-02f, -2.257480082e-04f, -3.175028833e-03f, -6.903396570e-04f,
     -4.790779712e-05f, -1.288634053e-06f, 0.000000000e+00f},  // t^4
    {5.112880841e-03f, -1.169207157e-03f, -2.211681101e-03f, 4.966100678e-04f, 2.969602938e-04f,
     3.026435297e-05f, 1.048909439e-06f, 0.000000000e+00f},  // t^5
    {0.000000000e+00f, -1.140224747e-03f, 5.573477247e-04f, 1.408055250e-04f, -7.926454418e-05f,
     -1.504881766e-05f, -7.481778539e-07f, 0.000000000e+00f},  // t^6
    {-4.492488515e-04f, 2.224478085e-04f, 7.567816647e-05f, -8.752068970e-05f, 7.399883998e-06f,
     5.210448307e-06f, 3.735699465e-07f, 0.000000000e+00f},  // t^7
};

// g(|x|) = erf(|x|/√2)/2.
inline __m256 half_erf(__m256 x) {
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 u = _mm256_min_ps(_mm256_mul_ps(a, _mm256_set1_ps(8.0f / 7.0f)), _mm256_set1_ps(7.0f));
  // u + 2^23 rounds u to the nearest integer n, which lands in the low mantissa bits: vpermps reads the index
  // from bits 2:0 of each lane (u ≥ 0; NaN became 7 in the min).
  const __m256 shifted = _mm256_add_ps(u, _mm256_set1_ps(8388608.0f));
  const __m256i n = _mm256_castps_si256(shifted);
  const __m256 t = _mm256_sub_ps(u, _mm256_sub_ps(shifted, _mm256_set1_ps(8388608.0f)));
  auto coef = [&](int k) { return _mm256_permutevar8x32_ps(_mm256_load_ps(kCoef[k]), n); };
  __m256 p = coef(7);
  for (int k = 6; k >= 0; --k) p = _mm256_fmadd_ps(p, t, coef(k));
  return p;
}

inline __m256 gelu_erf(__m256 x) {
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  return _mm256_fmadd_ps(a, half_erf(x), _mm256_mul_ps(x, _mm256_set1_ps(0.5f)));
}

}  // namespace gelu_table_avx2

// Avx2Ops whose erf GELU is the table's, for the AVX2 GEMM epilogues and the AVX2 channels-last depthwise row
// (gelu_vec::erf_gelu_of, gelu_vec_impl.h, picks it up through kOwnGeluErf).
struct Avx2TableGeluOps : Avx2Ops {
  static constexpr bool kOwnGeluErf = true;
  static V gelu_erf(V x) { return gelu_table_avx2::gelu_erf(x); }
};

}  // namespace
}  // namespace x86
}  // namespace vitrt
