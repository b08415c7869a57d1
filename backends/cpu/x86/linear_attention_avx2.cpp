// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LinearAttention's inner loops at AVX2+FMA; built with -mavx2 -mfma, only called when CPUID reports them.
#include "backends/cpu/x86/linear_attention_impl.h"

namespace vitrt {
namespace x86 {

const LinearAttentionSimd* linear_attention_simd_avx2() {
  static const LinearAttentionSimd t = make_linear_attention_simd<xsimd::fma3<xsimd::avx2>>("avx2");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
