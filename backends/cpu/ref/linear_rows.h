// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The reference Linear's arithmetic, shared by Linear (linear.cpp) and the fused ConvMlp (conv_mlp.cpp) so
// that the fused op gives the unfused graph's exact bits on this backend.
//
// Loop order i-k-j over a transposed weight Wt[K,N]: each output row accumulates (in float) K scaled,
// contiguous rows of Wt, which compilers vectorise without -ffast-math.
#include <cstdint>

#include "backends/cpu/ref/activation.h"

namespace vitrt {
namespace ref {

// wt[K,N] = w[N,K]ᵀ.
inline void transpose_weight(const float* w, int64_t n, int64_t k, float* wt) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) wt[j * n + i] = w[i * k + j];
}

// dst[i, :] = act(bias + Σ_k src[i, k]·wt[k, :]), then + residual[i, :] (both optional), for m rows.
inline void linear_rows(const float* src, int64_t m, int64_t k, const float* wt, int64_t n, const float* bias,
                        Activation act, const float* residual, float* dst) {
  for (int64_t i = 0; i < m; ++i) {
    const float* xr = src + i * k;
    float* yr = dst + i * n;
    for (int64_t j = 0; j < n; ++j) yr[j] = bias ? bias[j] : 0.0f;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float a = xr[kk];
      const float* wr = wt + kk * n;
      for (int64_t j = 0; j < n; ++j) yr[j] += a * wr[j];
    }
    apply_activation(act, yr, n);
    if (residual)
      for (int64_t j = 0; j < n; ++j) yr[j] += residual[i * n + j];
  }
}

}  // namespace ref
}  // namespace vitrt
