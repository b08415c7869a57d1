// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SelectiveKernel's inner loop at AVX2+FMA; built with -mavx2 -mfma, only called when CPUID reports them.
#include "backends/cpu/x86/selective_kernel_impl.h"

namespace vitrt {
namespace x86 {

const SelectiveKernelSimd* selective_kernel_simd_avx2() {
  static const SelectiveKernelSimd t = make_selective_kernel_simd<xsimd::fma3<xsimd::avx2>>("avx2");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
