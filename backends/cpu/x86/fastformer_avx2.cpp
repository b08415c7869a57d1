// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// FastformerAttention's inner loops at AVX2+FMA; built with -mavx2 -mfma, only called when CPUID reports
// them.
#include "backends/cpu/x86/fastformer_impl.h"

namespace vitrt {
namespace x86 {

const FastformerSimd* fastformer_simd_avx2() {
  static const FastformerSimd t = make_fastformer_simd<xsimd::fma3<xsimd::avx2>>("avx2");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
