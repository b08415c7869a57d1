// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// SoftmaxAttention's cosine form (Swin V2; ir/op_attrs.h, qk_norm and head_scales), shared by every backend's
// kernel so that all of them round the same way as the plain ops it replaces: ReduceL2 (the sum of squares in
// double, its square root rounded to float), Clip to eps, Div.
#include <cmath>
#include <cstdint>

#include "ir/op_attrs.h"

namespace vitrt {

// The factor head h's scores are multiplied by: head_scales[h] when given, else the scale.
inline float softmax_attention_head_scale(const SoftmaxAttentionAttrs& a, int64_t h) {
  return a.head_scales.empty() ? a.scale : a.head_scales[static_cast<size_t>(h)];
}

// max(‖src‖₂, eps) over src[0..n): what F.normalize(x, dim=-1) divides by; a NaN norm stays NaN, as Clip.
inline float l2_norm_clamped(const float* src, int64_t n, float eps) {
  double sum = 0.0;
  for (int64_t t = 0; t < n; ++t) sum += static_cast<double>(src[t]) * src[t];
  const float norm = static_cast<float>(std::sqrt(sum));
  return norm < eps ? eps : norm;
}

// dst[t] = src[t] / max(‖src‖₂, eps) for t < n.
inline void l2_normalize_row(const float* src, int64_t n, float eps, float* dst) {
  const float denom = l2_norm_clamped(src, n, eps);
  for (int64_t t = 0; t < n; ++t) dst[t] = src[t] / denom;
}

}  // namespace vitrt
