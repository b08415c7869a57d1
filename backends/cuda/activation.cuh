// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Device versions of the reference activations (backends/cpu/ref/activation.h), float32 arithmetic.
#include "ir/op_attrs.h"

namespace vitrt {
namespace cuda {

__device__ __forceinline__ float gelu_erf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
}

__device__ __forceinline__ float gelu_tanh(float x) {
  const float k = 0.79788456080286535588f;  // √(2/π)
  return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}

__device__ __forceinline__ float relu(float x) {
  return x < 0.0f ? 0.0f : x;  // NaN stays NaN
}

template <Activation A>
__device__ __forceinline__ float activate(float x) {
  if (A == Activation::kRelu) return relu(x);
  if (A == Activation::kGeluErf) return gelu_erf(x);
  if (A == Activation::kGeluTanh) return gelu_tanh(x);
  return x;
}

}  // namespace cuda
}  // namespace vitrt
