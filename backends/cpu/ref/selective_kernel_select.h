// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The small middle of SelectiveKernel (core/ir/op_attrs.h, SelectiveKernelAttrs; docs/linear_attention.md
// "SE and SK"): from one image's channel means s [C] of U = Σ_i x_i, the branch weights a [M·C]. Each fully
// connected output as Conv2d 1x1 and Linear compute it (the bias, then the products in input order, in
// float; squeeze_excite_gate.h), the folded BatchNorm as z·scale + shift, the softmax over the branches as
// the Softmax kernel computes it (the max subtracted, the sum of the exponentials in double, then each one
// times the float reciprocal). Shared by the reference and the x86 kernels: it is O(M·C·d) per image, nothing
// beside the two passes over the branches.
#include <cmath>
#include <cstdint>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/squeeze_excite_gate.h"
#include "ir/op_attrs.h"

namespace vitrt {
namespace ref {

struct SelectiveKernelWeights {
  const float* fc_reduce_weight = nullptr;  // [d, C]
  const float* fc_reduce_bias = nullptr;    // [d] or null
  const float* z_scale = nullptr;           // [d] or null (then z_shift too)
  const float* z_shift = nullptr;
  const float* fc_select_weight = nullptr;  // [M·C, d]
  const float* fc_select_bias = nullptr;    // [M·C] or null
  int64_t c = 0, d = 0;
  int32_t m = 0;
};

// a [M·C] (branch i's weights at a[i·C ..]) from s [C]; z [d] is scratch.
inline void selective_kernel_select(const SelectiveKernelAttrs& attrs, const SelectiveKernelWeights& w,
                                    const float* s, float* z, float* a) {
  const int64_t c = w.c, d = w.d, m = w.m;
  fc_rows(s, w.fc_reduce_weight, w.fc_reduce_bias, d, c, z);
  if (w.z_scale)
    for (int64_t j = 0; j < d; ++j) z[j] = z[j] * w.z_scale[j] + w.z_shift[j];
  if (attrs.z_activation == SelectiveKernelActivation::kRelu)
    for (int64_t j = 0; j < d; ++j) z[j] = relu(z[j]);
  fc_rows(z, w.fc_select_weight, w.fc_select_bias, m * c, d, a);
  for (int64_t ch = 0; ch < c; ++ch) {
    float mx = a[ch];
    for (int64_t i = 1; i < m; ++i) mx = a[i * c + ch] > mx ? a[i * c + ch] : mx;
    double sum = 0.0;
    for (int64_t i = 0; i < m; ++i) {
      const float e = std::exp(a[i * c + ch] - mx);
      a[i * c + ch] = e;
      sum += e;
    }
    const float r = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < m; ++i) a[i * c + ch] *= r;
  }
}

}  // namespace ref
}  // namespace vitrt
