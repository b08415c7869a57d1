// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The feature maps φ of KernelizedAttention (core/ir/op_attrs.h, KernelizedAttentionAttrs;
// docs/linear_attention.md), shared by the reference and x86 kernels so that both apply the same arithmetic
// to every element: elu(x) + 1 as PyTorch's F.elu (expm1 below 0), then a division by the kind's scale; a
// softmax as max, exp(x − max), a float sum in index order, then a division.
#include <cmath>
#include <cstdint>

namespace vitrt {
namespace ref {

// elu(x) + 1, divided by `scale` unless it is 1 (kEluNormalized's φ has no division).
inline float elu_feature(float x, float scale) {
  const float e = (x > 0.0f ? x : std::expm1(x)) + 1.0f;
  return scale == 1.0f ? e : e / scale;
}

// dst[i·dst_stride] = softmax(src[i·src_stride] for i < n).
inline void softmax_strided(const float* src, int64_t src_stride, int64_t n, float* dst, int64_t dst_stride) {
  float mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, src[i * src_stride]);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(src[i * src_stride] - mx);
    dst[i * dst_stride] = e;
    sum += e;
  }
  for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] /= sum;
}

}  // namespace ref
}  // namespace vitrt
