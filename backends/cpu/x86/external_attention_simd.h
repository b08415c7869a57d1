// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The column loops of the x86 ExternalAttention kernel (external_attention.cpp), one table per ISA level:
// external_attention_impl.h writes them once on xsimd batches, external_attention_avx512.cpp and
// external_attention_avx2.cpp instantiate them. Both run down the token rows of a block of logits with one
// vector per group of `width` memory slots; `cols` is always a whole number of vectors. Nothing here
// allocates or threads.
#include <cstdint>

namespace vitrt {
namespace x86 {

struct ExternalAttentionSimd {
  const char* name;
  int width;  // floats per vector
  // mx[j] = max over i < rows of l[i·ld + j], for j < cols.
  void (*column_max)(const float* l, int64_t rows, int64_t ld, int64_t cols, float* mx);
  // l[i·ld + j] = exp(l[i·ld + j] − m[j]) in place, and sum[j] = their float sum in row order, for i < rows,
  // j < cols.
  void (*exp_columns)(float* l, int64_t rows, int64_t ld, int64_t cols, const float* m, float* sum);
};

const ExternalAttentionSimd* external_attention_simd_avx512();
const ExternalAttentionSimd* external_attention_simd_avx2();

}  // namespace x86
}  // namespace vitrt
