// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// GELU on one register, for the packed GEMM's and depthwise row's epilogues (the accumulators are activated
// before they are stored; their erf form is the ISA's table GELU where the ops T have one, erf_gelu_of below)
// and the elementwise Gelu. Written over an ISA's vector ops T (set1, add, sub, mul, fma, min, max, abs,
// round, pow2n, rcp, select_neg; see packed_gemm_avx512.cpp / packed_gemm_avx2.cpp). Cheaper than xsimd's erf
// and tanh, and accurate to a few float ulps of the result:
//   exp: Cody–Waite range reduction and Cephes' degree-6 polynomial (relative error ~1e-7);
//   erf: Abramowitz & Stegun 7.1.26, erfc(z) = t·P(t)·exp(-z²) with t = 1/(1 + p·z) (absolute error 1.5e-7);
//   tanh form: 0.5·x·(1 + tanh(u)) = x / (1 + exp(-2u)).
// It is also the elementwise GELU's (simd_impl.h).

#include <type_traits>

namespace vitrt {
namespace x86 {
namespace gelu_vec {

template <class T>
inline typename T::V exp(typename T::V x) {
  using V = typename T::V;
  x = T::min(T::max(x, T::set1(-87.3f)), T::set1(88.3f));
  const V n = T::round(T::mul(x, T::set1(1.44269504088896341f)));
  V r = T::fma(n, T::set1(-0.693359375f), x);
  r = T::fma(n, T::set1(2.12194440e-4f), r);
  V p = T::set1(1.9875691500e-4f);
  p = T::fma(p, r, T::set1(1.3981999507e-3f));
  p = T::fma(p, r, T::set1(8.3334519073e-3f));
  p = T::fma(p, r, T::set1(4.1665795894e-2f));
  p = T::fma(p, r, T::set1(1.6666665459e-1f));
  p = T::fma(p, r, T::set1(5.0000001201e-1f));
  p = T::fma(T::mul(p, r), r, T::add(r, T::set1(1.0f)));
  return T::mul(p, T::pow2n(n));
}

// 0.5·x·(1 + erf(x/√2)) = x - 0.5·x·erfc(z) for x >= 0, 0.5·x·erfc(z) for x < 0, z = |x|/√2. The x that
// multiplies erfc is clamped to ±10 (erfc(10/√2) ≈ 1.5e-23, far below an ulp of x there), so that
// gelu(+inf) = +inf rather than inf·0. Like every float32 implementation of the erf form (PyTorch's and the
// reference's), the result is 0 where 1 + erf(x/√2) rounds to 0 in float: x < 0 with erfc(z) < 2^-25. At -inf
// it is 0 where the reference, PyTorch and the table GELUs (gelu_table_avx512.h, gelu_table_avx2.h) give NaN
// (-inf·0).
template <class T>
inline typename T::V gelu_erf(typename T::V x) {
  using V = typename T::V;
  const V z = T::mul(T::abs(x), T::set1(0.70710678118654752f));
  const V t = T::rcp(T::fma(z, T::set1(0.3275911f), T::set1(1.0f)));
  V p = T::set1(1.061405429f);
  p = T::fma(p, t, T::set1(-1.453152027f));
  p = T::fma(p, t, T::set1(1.421413741f));
  p = T::fma(p, t, T::set1(-0.284496736f));
  p = T::fma(p, t, T::set1(0.254829592f));
  const V erfc = T::mul(T::mul(p, t), exp<T>(T::mul(T::sub(T::zero(), z), z)));
  const V x_clamped = T::min(T::max(x, T::set1(-10.0f)), T::set1(10.0f));
  const V half_x_erfc = T::mul(T::mul(T::set1(0.5f), x_clamped), erfc);
  const V negative = T::select_neg(T::sub(erfc, T::set1(2.98023224e-8f)), T::zero(), half_x_erfc);
  return T::select_neg(x, negative, T::sub(x, half_x_erfc));
}

template <class T>
inline typename T::V gelu_tanh(typename T::V x) {
  using V = typename T::V;
  const V x3 = T::mul(T::mul(x, x), x);
  const V u = T::fma(x3, T::set1(0.044715f), x);                 // u / √(2/π)
  const V e = exp<T>(T::mul(u, T::set1(-1.5957691216057308f)));  // exp(-2·√(2/π)·u)
  const V s = T::rcp(T::add(T::set1(1.0f), e));                  // (1 + tanh) / 2
  // 0 where 1 + tanh rounds to 0 in float (s < 2^-26), as in PyTorch's and the reference's float32 GELU.
  return T::select_neg(T::sub(s, T::set1(1.49011612e-8f)), T::zero(), T::mul(x, s));
}

// The erf GELU of ops T: T's own where it has one (T::kOwnGeluErf: the table GELUs of gelu_table_avx512.h and
// gelu_table_avx2.h, which the GEMM and depthwise epilogues use), else gelu_erf above.
template <class T, class = void>
struct HasOwnGeluErf : std::false_type {};
template <class T>
struct HasOwnGeluErf<T, std::enable_if_t<T::kOwnGeluErf>> : std::true_type {};

template <class T>
inline typename T::V erf_gelu_of(typename T::V x) {
  if constexpr (HasOwnGeluErf<T>::value)
    return T::gelu_erf(x);
  else
    return gelu_erf<T>(x);
}

}  // namespace gelu_vec
}  // namespace x86
}  // namespace vitrt
