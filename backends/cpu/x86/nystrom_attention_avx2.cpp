// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// NystromAttention's exp loops at AVX2+FMA; built with -mavx2 -mfma, only called when CPUID
// reports them.
#include "backends/cpu/x86/nystrom_attention_impl.h"

namespace vitrt {
namespace x86 {

const NystromSimd* nystrom_simd_avx2() {
  static const NystromSimd t = make_nystrom_simd<xsimd::fma3<xsimd::avx2>>("avx2");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
