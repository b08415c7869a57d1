// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The vector loops of the x86 NystromAttention kernel (nystrom_attention.cpp): the exps of the softmax rows
// of k1 and of the running softmax of k3 over token blocks, the landmark sums and the scaled query copy, one
// table per ISA level. nystrom_attention_impl.h writes them once (on xsimd batches, or as plain loops the
// compiler vectorises), nystrom_attention_avx512.cpp and nystrom_attention_avx2.cpp instantiate them. Row
// lengths are any n >= 1 (a last partial vector goes through a padded register). Nothing here allocates or
// threads.
#include <cstdint>

namespace vitrt {
namespace x86 {

struct NystromSimd {
  const char* name;
  // max_j row[j], j < n.
  float (*row_max)(const float* row, int64_t n);
  // row[j] = exp(row[j] − max) in place for j < n; returns their float sum (vector lanes, then the lanes).
  float (*exp_sum)(float* row, int64_t n, float max);
  // row[j] *= s for j < n.
  void (*scale)(float* row, int64_t n, float s);
  // sum[j] += double(row[j] · s) for j < n: float products, double sums (the landmark means).
  void (*scaled_sum)(const float* row, int64_t n, float s, double* sum);
  // dst[j] = src[j] · s for j < n.
  void (*scaled_copy)(const float* src, int64_t n, float s, float* dst);
};

const NystromSimd* nystrom_simd_avx512();
const NystromSimd* nystrom_simd_avx2();

}  // namespace x86
}  // namespace vitrt
