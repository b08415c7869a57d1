// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// GELU, erf form, on one AVX-512 register from a table of piecewise polynomials instead of an erf and an exp:
// GELU(x) = x/2 + |x|·g(|x|) with g(a) = erf(a/√2)/2, and g on 32 intervals of width 3/16 centred on n·3/16
// (n = round(a·16/3), t = a·16/3 − n in [−1/2, 1/2]) a degree-4 polynomial in t whose coefficients two
// vpermt2ps per power pick from 32-entry tables; a ≥ 5.72 (where erf rounds to 1 in float) takes the constant
// 1/2. About 17 instructions against gelu_vec::gelu_erf's 33 (division estimate, erfc polynomial and exp).
// Accuracy (tools/fit_gelu_table.py, which fits the table; tests/x86/gelu_table_x86_test.cpp): erf within
// 7.1e-8 absolute and 4.0e-7 relative, the GELU within 9e-8·|x| — below gelu_vec::gelu_erf's 1.5e-7 on erf
// and the 1.1e-7·|x| of the float formula x/2·(1 + erf(x/√2)) that PyTorch and the reference compute.
// Like that formula, GELU(+inf) = +inf and GELU(−inf) = NaN (−inf·0); NaN stays NaN.
// Include only from *_avx512.cpp files (built with -mavx512*).
#include <immintrin.h>

#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {
namespace {

namespace gelu_table {

// kCoef[k][n]: the coefficient of t^k on interval n (tools/fit_gelu_table.py prints them).
alignas(64) constexpr float kCoef[5][32] = {
    {
        // t^0
        0.000000000e+00f, 7.436569035e-02f, 1.461697668e-01f, 2.131122947e-01f, 2.733726501e-01f,
        3.257492781e-01f, 3.697054684e-01f, 4.053242505e-01f, 4.331927896e-01f, 4.542463720e-01f,
        4.696036279e-01f, 4.804199338e-01f, 4.877755344e-01f, 4.926053882e-01f, 4.956675470e-01f,
        4.975421131e-01f, 4.986501038e-01f, 4.992824495e-01f, 4.996309280e-01f, 4.998163283e-01f,
        4.999115765e-01f, 4.999588430e-01f, 4.999814630e-01f, 4.999919236e-01f, 4.999966025e-01f,
        4.999986291e-01f, 4.999994636e-01f, 4.999997914e-01f, 4.999999106e-01f, 4.999999702e-01f,
        5.000000000e-01f, 5.000000000e-01f,
    },
    {
        // t^1
        7.480166107e-02f, 7.349824905e-02f, 6.972280145e-02f, 6.385640800e-02f, 5.646326765e-02f,
        4.820137098e-02f, 3.972689435e-02f, 3.161124885e-02f, 2.428457513e-02f, 1.801155321e-02f,
        1.289744116e-02f, 8.916362189e-03f, 5.951186642e-03f, 3.834874369e-03f, 2.385779750e-03f,
        1.432983321e-03f, 8.309665718e-04f, 4.652190546e-04f, 2.514565422e-04f, 1.312199311e-04f,
        6.611014396e-05f, 3.215642209e-05f, 1.510075435e-05f, 6.846376891e-06f, 2.996775038e-06f,
        1.266422487e-06f, 5.166948540e-07f, 2.035263407e-07f, 7.739947705e-08f, 2.841752789e-08f,
        1.007315031e-08f, 0.000000000e+00f,
    },
    {
        // t^2
        0.000000000e+00f,  -1.291959896e-03f, -2.451189328e-03f, -3.367423778e-03f, -3.970068879e-03f,
        -4.236443900e-03f, -4.189941566e-03f, -3.889661748e-03f, -3.415015759e-03f, -2.849482466e-03f,
        -2.267127857e-03f, -1.724062720e-03f, -1.255329582e-03f, -8.763301303e-04f, -5.871269968e-04f,
        -3.778388491e-04f, -2.337105834e-04f, -1.390215184e-04f, -7.956314948e-05f, -4.382592306e-05f,
        -2.324218804e-05f, -1.187045746e-05f, -5.839874120e-06f, -2.768042805e-06f, -1.264304842e-06f,
        -5.565543688e-07f, -2.361561968e-07f, -9.660053024e-08f, -3.809735460e-08f, -1.448728781e-08f,
        -5.312436269e-09f, 0.000000000e+00f,
    },
    {
        // t^3
        -4.377137229e-04f, -4.148544976e-04f, -3.505944915e-04f, -2.555256942e-04f, -1.447526884e-04f,
        -3.443288733e-05f, 6.144875078e-05f,  1.334078843e-04f,  1.774407137e-04f,  1.946485281e-04f,
        1.898699120e-04f,  1.698707638e-04f,  1.416266605e-04f,  1.110658413e-04f,  8.241625619e-05f,
        5.810397852e-05f,  3.903197285e-05f,  2.503759606e-05f,  1.536164746e-05f,  9.026444786e-06f,
        5.084846634e-06f,  2.748438192e-06f,  1.426403287e-06f,  7.112115554e-07f,  3.408539726e-07f,
        1.570843580e-07f,  6.963846033e-08f,  2.970661050e-08f,  1.219729562e-08f,  4.821533395e-09f,
        1.835312347e-09f,  0.000000000e+00f,
    },
    {
        // t^4
        0.000000000e+00f,  1.119773151e-05f,  2.049092109e-05f,  2.642334039e-05f,  2.830125777e-05f,
        2.628782386e-05f,  2.126856270e-05f,  1.455223537e-05f,  7.514382105e-06f,  1.291438366e-06f,
        -3.402034508e-06f, -6.312483947e-06f, -7.569145055e-06f, -7.541395007e-06f, -6.687389487e-06f,
        -5.434542345e-06f, -4.109995189e-06f, -2.919234021e-06f, -1.958977691e-06f, -1.247120167e-06f,
        -7.554365311e-07f, -4.363841697e-07f, -2.408083617e-07f, -1.271158254e-07f, -6.425882759e-08f,
        -3.113614255e-08f, -1.447183795e-08f, -6.456326584e-09f, -2.766221474e-09f, -1.138752537e-09f,
        -4.506055251e-10f, 0.000000000e+00f,
    },
};

// g(|x|) = erf(|x|/√2)/2.
inline __m512 half_erf(__m512 x) {
  const __m512 u =
      _mm512_min_ps(_mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(16.0f / 3.0f)), _mm512_set1_ps(31.0f));
  // u + 2^23 rounds u to the nearest integer n, which lands in the low mantissa bits: vpermt2ps reads the
  // index from bits 4:0 of each lane (u ≥ 0; NaN became 31 in the min).
  const __m512 shifted = _mm512_add_ps(u, _mm512_set1_ps(8388608.0f));
  const __m512i n = _mm512_castps_si512(shifted);
  const __m512 t = _mm512_sub_ps(u, _mm512_sub_ps(shifted, _mm512_set1_ps(8388608.0f)));
  auto coef = [&](int k) {
    return _mm512_permutex2var_ps(_mm512_load_ps(kCoef[k]), n, _mm512_load_ps(kCoef[k] + 16));
  };
  __m512 p = coef(4);
  p = _mm512_fmadd_ps(p, t, coef(3));
  p = _mm512_fmadd_ps(p, t, coef(2));
  p = _mm512_fmadd_ps(p, t, coef(1));
  return _mm512_fmadd_ps(p, t, coef(0));
}

inline __m512 gelu_erf(__m512 x) {
  return _mm512_fmadd_ps(_mm512_abs_ps(x), half_erf(x), _mm512_mul_ps(x, _mm512_set1_ps(0.5f)));
}

}  // namespace gelu_table

// Avx512Ops whose erf GELU is the table's, for every AVX-512 GEMM epilogue, fp32 and bf16
// (gelu_vec::erf_gelu_of, gelu_vec_impl.h, picks it up through kOwnGeluErf).
struct Avx512TableGeluOps : Avx512Ops {
  static constexpr bool kOwnGeluErf = true;
  static V gelu_erf(V x) { return gelu_table::gelu_erf(x); }
};

}  // namespace
}  // namespace x86
}  // namespace vitrt
