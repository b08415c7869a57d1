// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The inner loop of the x86 SelectiveKernel kernel, one table per ISA level: selective_kernel_impl.h writes
// it once on xsimd batches, selective_kernel_avx512.cpp and selective_kernel_avx2.cpp instantiate it. Nothing
// here allocates or threads.
#include <cstdint>

namespace vitrt {
namespace x86 {

struct SelectiveKernelSimd {
  const char* name;
  // dst[p] = Σ_{i<m, in order} w[i·w_stride]·src[i][p] for p < n: one float accumulator per element, one
  // FMA per branch (the first a product).
  void (*weighted_sum)(const float* const* src, const float* w, int64_t w_stride, int m, float* dst,
                       int64_t n);
};

const SelectiveKernelSimd* selective_kernel_simd_avx512();
const SelectiveKernelSimd* selective_kernel_simd_avx2();

}  // namespace x86
}  // namespace vitrt
