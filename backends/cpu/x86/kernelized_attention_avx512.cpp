// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// KernelizedAttention's element loops at AVX-512F; built with the AVX-512 flags, only called when CPUID
// reports them.
#include "backends/cpu/x86/kernelized_attention_impl.h"

namespace vitrt {
namespace x86 {

const KernelizedSimd* kernelized_simd_avx512() {
  static const KernelizedSimd t = make_kernelized_simd<xsimd::avx512bw>("avx512");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
