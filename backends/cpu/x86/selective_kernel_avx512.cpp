// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SelectiveKernel's inner loop at AVX-512 (F/BW/VL/DQ); built with -mavx512*, only called when CPUID
// reports them.
#include "backends/cpu/x86/selective_kernel_impl.h"

namespace vitrt {
namespace x86 {

const SelectiveKernelSimd* selective_kernel_simd_avx512() {
  static const SelectiveKernelSimd t = make_selective_kernel_simd<xsimd::avx512bw>("avx512");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
