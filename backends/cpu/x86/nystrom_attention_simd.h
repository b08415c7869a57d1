// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The exp loops of the x86 NystromAttention kernel (nystrom_attention.cpp): the softmax rows of k1 and the
// running softmax of k3 over token blocks, one table per ISA level. nystrom_attention_impl.h writes them once
// on xsimd batches, nystrom_attention_avx512.cpp and nystrom_attention_avx2.cpp instantiate them. Row
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
};

const NystromSimd* nystrom_simd_avx512();
const NystromSimd* nystrom_simd_avx2();

}  // namespace x86
}  // namespace vitrt
