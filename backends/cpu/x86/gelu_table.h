// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The table GELUs on arrays, for tests: gelu_table_avx512.h's (the AVX-512 GEMM epilogues' and depthwise
// rows' erf GELU) and gelu_table_avx2.h's (the AVX2 ones'). Need AVX-512, resp. AVX2 + FMA (callers check
// x86_detect_isa()).
#include <cstdint>

namespace vitrt {
namespace x86 {

// dst[i] = GELU(src[i]), erf form.
void gelu_erf_table_avx512(const float* src, float* dst, int64_t n);
void gelu_erf_table_avx2(const float* src, float* dst, int64_t n);
// dst[i] = erf(|src[i]|/√2)/2, the table part of it.
void half_erf_table_avx512(const float* src, float* dst, int64_t n);
void half_erf_table_avx2(const float* src, float* dst, int64_t n);

}  // namespace x86
}  // namespace vitrt
