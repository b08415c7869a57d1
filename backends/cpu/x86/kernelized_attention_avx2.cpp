// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// KernelizedAttention's element loops at AVX2+FMA; built with -mavx2 -mfma, only called when CPUID reports
// them.
#include "backends/cpu/x86/kernelized_attention_impl.h"

namespace vitrt {
namespace x86 {

const KernelizedSimd* kernelized_simd_avx2() {
  static const KernelizedSimd t = make_kernelized_simd<xsimd::fma3<xsimd::avx2>>("avx2");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
