// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ExternalAttention's column loops at AVX-512; built with the AVX-512 flags, only called when CPUID reports
// them.
#include "backends/cpu/x86/external_attention_impl.h"

namespace vitrt {
namespace x86 {

const ExternalAttentionSimd* external_attention_simd_avx512() {
  static const ExternalAttentionSimd t = make_external_attention_simd<xsimd::avx512bw>("avx512");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
