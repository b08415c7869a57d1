// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LinearAttention's inner loops at AVX-512 (F/BW/VL/DQ); built with -mavx512*, only called when CPUID reports
// them.
#include "backends/cpu/x86/linear_attention_impl.h"

namespace vitrt {
namespace x86 {

const LinearAttentionSimd* linear_attention_simd_avx512() {
  static const LinearAttentionSimd t = make_linear_attention_simd<xsimd::avx512bw>("avx512");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
