// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// gelu_table.h's array form of the AVX2 table GELU (built with -mavx2 -mfma).
#include "backends/cpu/x86/gelu_table_avx2.h"

#include "backends/cpu/x86/gelu_table.h"

namespace vitrt {
namespace x86 {

namespace {

template <__m256 (*F)(__m256)>
void apply(const float* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, F(_mm256_loadu_ps(src + i)));
  if (i < n) {
    const int left = static_cast<int>(n - i);
    _mm256_maskstore_ps(dst + i, Avx2Ops::mask(left), F(Avx2Ops::loadn(src + i, left)));
  }
}

}  // namespace

void gelu_erf_table_avx2(const float* src, float* dst, int64_t n) {
  apply<gelu_table_avx2::gelu_erf>(src, dst, n);
}

void half_erf_table_avx2(const float* src, float* dst, int64_t n) {
  apply<gelu_table_avx2::half_erf>(src, dst, n);
}

}  // namespace x86
}  // namespace vitrt
