// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// FastformerAttention's inner loops at AVX-512; built with AVX-512 flags, only called when CPUID reports
// them.
#include "backends/cpu/x86/fastformer_impl.h"

namespace vitrt {
namespace x86 {

const FastformerSimd* fastformer_simd_avx512() {
  static const FastformerSimd t = make_fastformer_simd<xsimd::avx512bw>("avx512");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
