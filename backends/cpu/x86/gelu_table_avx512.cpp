// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// gelu_table.h's array form of the table GELU (built with -mavx512*).
#include "backends/cpu/x86/gelu_table_avx512.h"

#include "backends/cpu/x86/gelu_table.h"

namespace vitrt {
namespace x86 {

namespace {

template <__m512 (*F)(__m512)>
void apply(const float* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, F(_mm512_loadu_ps(src + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(dst + i, m, F(_mm512_maskz_loadu_ps(m, src + i)));
  }
}

}  // namespace

void gelu_erf_table_avx512(const float* src, float* dst, int64_t n) {
  apply<gelu_table::gelu_erf>(src, dst, n);
}

void half_erf_table_avx512(const float* src, float* dst, int64_t n) {
  apply<gelu_table::half_erf>(src, dst, n);
}

}  // namespace x86
}  // namespace vitrt
