// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The element loops of the x86 KernelizedAttention kernel (kernelized_attention.cpp), one table per ISA
// level: kernelized_attention_impl.h writes them once on xsimd batches, kernelized_attention_avx512.cpp and
// kernelized_attention_avx2.cpp instantiate them. The products run on the packed GEMM. Row lengths are any
// n >= 1 (a last partial vector goes through a zero-padded register). Nothing here allocates or threads.
#include <cstdint>

namespace vitrt {
namespace x86 {

struct KernelizedSimd {
  const char* name;
  // dst[r·ldd + j] = φ(src[r·lds + j]) for j < n, r < rows: elu(x) + 1 (expm1 below 0, as
  // ref::elu_feature), divided by `scale` unless it is 1.
  void (*elu_rows)(const float* src, int64_t lds, int64_t rows, int64_t n, float scale, float* dst,
                   int64_t ldd);
  // Σ_j x[j], j < n (vector partial sums, then the lanes).
  float (*sum)(const float* x, int64_t n);
  // Σ_j a[j]·b[j], j < n.
  float (*dot)(const float* a, const float* b, int64_t n);
  // x[r·ldx + j] *= s[r] for j < n, r < rows.
  void (*scale_rows)(float* x, int64_t ldx, int64_t rows, int64_t n, const float* s);
};

const KernelizedSimd* kernelized_simd_avx512();
const KernelizedSimd* kernelized_simd_avx2();

}  // namespace x86
}  // namespace vitrt
