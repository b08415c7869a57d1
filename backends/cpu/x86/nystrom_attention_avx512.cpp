// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// NystromAttention's exp loops at AVX-512F; built with the AVX-512 flags, only called when CPUID
// reports them.
#include "backends/cpu/x86/nystrom_attention_impl.h"

namespace vitrt {
namespace x86 {

const NystromSimd* nystrom_simd_avx512() {
  static const NystromSimd t = make_nystrom_simd<xsimd::avx512bw>("avx512");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
