// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The two remainders of ONNX Mod on floats (docs/onnx.md): `fmod` = 1 is C's fmod (the dividend's sign),
// `fmod` = 0 numpy.mod (Python's rule, the divisor's sign), which ONNX's reference implementation computes.
#include <cmath>

namespace vitrt {
namespace ref {

// a − trunc(a/b)·b, exact (std::fmod); NaN where b is 0 or a is ±inf; a itself where b is ±inf.
inline float fmod_rem(float a, float b) {
  return std::fmod(a, b);
}

// numpy.mod's float rule (npy_divmod): the fmod remainder moved by b when its sign differs from b's; a zero
// remainder takes b's sign. In float32 as numpy computes float32 arrays: 3 mod -inf is -inf, -0 mod 2 is +0.
inline float python_mod(float a, float b) {
  float r = std::fmod(a, b);
  if (r == 0.0f) return std::copysign(0.0f, b);
  if ((b < 0.0f) != (r < 0.0f)) r += b;  // NaN r stays NaN
  return r;
}

}  // namespace ref
}  // namespace vitrt
