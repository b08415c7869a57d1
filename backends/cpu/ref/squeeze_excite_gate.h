// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The reference SqueezeExcite's arithmetic (core/ir/op_attrs.h, SqueezeExciteAttrs), in the unfused ops'
// order so that the fused op gives the unfused graph's exact bits on this backend: each plane's mean as
// AdaptiveAvgPool2d(1) takes it (a double sum in row-major order, divided by H·W; ReduceMean over H, W
// divides the same sum the same way), each fully connected output as Conv2d 1x1 and Linear compute it (the
// bias, then the products added in input order, in float), the activations as Relu and Unary do.
#include <cstdint>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/unary_functions.h"
#include "ir/op_attrs.h"

namespace vitrt {
namespace ref {

// The mean of n floats: their sum in double, in order, divided by n.
inline float plane_mean(const float* src, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += src[i];
  return static_cast<float>(sum / static_cast<double>(n));
}

// dst[j] = bias[j] + Σ_k w[j, k]·src[k] for j < rows, w [rows, cols] row-major; bias may be null.
inline void fc_rows(const float* src, const float* w, const float* bias, int64_t rows, int64_t cols,
                    float* dst) {
  for (int64_t j = 0; j < rows; ++j) {
    float acc = bias ? bias[j] : 0.0f;
    const float* wr = w + j * cols;
    for (int64_t k = 0; k < cols; ++k) acc += wr[k] * src[k];
    dst[j] = acc;
  }
}

inline float squeeze_activation(SqueezeActivation act, float x) {
  return act == SqueezeActivation::kSilu ? silu(x) : relu(x);
}

inline float excite_gate(const SqueezeExciteAttrs& a, float x) {
  return a.gate == ExciteGate::kHardSigmoid ? hard_sigmoid(x, a.gate_alpha, a.gate_beta) : sigmoid(x);
}

// The gate g [c] of one image from its channel means s [c]; hidden [cr] is scratch.
inline void squeeze_excite_gate(const SqueezeExciteAttrs& a, const float* s, int64_t c, const float* w1,
                                const float* b1, int64_t cr, const float* w2, const float* b2, float* hidden,
                                float* g) {
  fc_rows(s, w1, b1, cr, c, hidden);
  for (int64_t j = 0; j < cr; ++j) hidden[j] = squeeze_activation(a.activation, hidden[j]);
  fc_rows(hidden, w2, b2, c, cr, g);
  for (int64_t j = 0; j < c; ++j) g[j] = excite_gate(a, g[j]);
}

}  // namespace ref
}  // namespace vitrt
