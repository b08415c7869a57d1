// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// PerformerAttention's element loops at AVX2+FMA; built with -mavx2 -mfma, only called when CPUID reports
// them.
#include "backends/cpu/x86/performer_attention_impl.h"

namespace vitrt {
namespace x86 {

const PerformerSimd* performer_simd_avx2() {
  static const PerformerSimd t = make_performer_simd<xsimd::fma3<xsimd::avx2>>("avx2");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
