// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Elementwise activations, exactly as PyTorch defines them (float32 arithmetic). Shared by the Gelu/Relu
// kernels and by the epilogues of Conv2d and Linear (SiLU and HardSwish: the Unary kernel's functions).
#include <cmath>
#include <cstdint>

#include "backends/cpu/ref/unary_functions.h"
#include "ir/op_attrs.h"

namespace vitrt {
namespace ref {

inline float relu(float x) {
  return x < 0.0f ? 0.0f : x;
}  // NaN stays NaN, as torch.relu

// 0.5·x·(1 + erf(x/√2))
inline float gelu_erf(float x) {
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752440f));
}

// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
inline float gelu_tanh(float x) {
  const float k = 0.79788456080286535588f;  // √(2/π)
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

// Applies `act` to p[0..n) in place.
inline void apply_activation(Activation act, float* p, int64_t n) {
  switch (act) {
    case Activation::kNone:
      return;
    case Activation::kRelu:
      for (int64_t i = 0; i < n; ++i) p[i] = relu(p[i]);
      return;
    case Activation::kGeluErf:
      for (int64_t i = 0; i < n; ++i) p[i] = gelu_erf(p[i]);
      return;
    case Activation::kGeluTanh:
      for (int64_t i = 0; i < n; ++i) p[i] = gelu_tanh(p[i]);
      return;
    case Activation::kSilu:  // the Unary kinds' own functions: a fused epilogue computes what the op did
      for (int64_t i = 0; i < n; ++i) p[i] = silu(p[i]);
      return;
    case Activation::kHardSwish:
      for (int64_t i = 0; i < n; ++i) p[i] = hard_swish(p[i]);
      return;
    case Activation::kRelu6:  // the Unary Clip's own function, so NaN stays NaN as there
      for (int64_t i = 0; i < n; ++i) p[i] = clamp_nan(p[i], 0.0f, 6.0f);
      return;
  }
}

inline bool activation_valid(Activation act) {
  return act == Activation::kNone || act == Activation::kRelu || act == Activation::kGeluErf ||
         act == Activation::kGeluTanh || act == Activation::kSilu || act == Activation::kHardSwish ||
         act == Activation::kRelu6;
}

}  // namespace ref
}  // namespace vitrt
