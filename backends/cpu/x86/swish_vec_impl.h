// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// SiLU, HardSwish and ReLU6 on one register, for the epilogues of the packed GEMM and the depthwise kernels
// (EfficientNet's, MobileNetV3's and MobileNetV2's convs end in them). Written over an ISA's vector ops T
// (vec_avx512.h, vec_avx2.h), with the same arithmetic as the Unary kernel's vector loop (simd_impl.h):
//   silu:       x / (1 + e^-x), e^-x by gelu_vec::exp, and +inf for the denominator where -x > 88.3 (past the
//               exp's clamp; the reference's e^-x overflows there too), so silu(-inf) is NaN as in PyTorch;
//   hard_swish: x·clamp(x/6 + 1/2, 0, 1), a true division by 6 as the reference;
//   relu6:      clamp(x, 0, 6) keeping NaN, as the Unary Clip.
#include <limits>

#include "backends/cpu/x86/gelu_vec_impl.h"

namespace vitrt {
namespace x86 {
namespace swish_vec {

template <class T>
inline typename T::V silu(typename T::V x) {
  using V = typename T::V;
  const V minus = T::sub(T::zero(), x);
  const V d = T::add(T::set1(1.0f), gelu_vec::exp<T>(minus));
  // -x > 88.3, i.e. 88.3 - (-x) < 0: the denominator is +inf
  const V inf = T::set1(std::numeric_limits<float>::infinity());
  return T::div(x, T::select_neg(T::sub(T::set1(88.3f), minus), inf, d));
}

template <class T>
inline typename T::V hard_swish(typename T::V x) {
  const typename T::V u = T::add(T::div(x, T::set1(6.0f)), T::set1(0.5f));
  // max(0, u) then min(1, ·): the second operand is returned for NaN, so a NaN u stays NaN
  return T::mul(x, T::min(T::set1(1.0f), T::max(T::zero(), u)));
}

template <class T>
inline typename T::V relu6(typename T::V x) {
  // max(0, x) then min(6, ·): the second operand is returned for NaN, so NaN stays NaN
  return T::min(T::set1(6.0f), T::max(T::zero(), x));
}

}  // namespace swish_vec
}  // namespace x86
}  // namespace vitrt
