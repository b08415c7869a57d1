// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Plain SoftmaxAttention's flash-attention loops at AVX2+FMA; built with -mavx2 -mfma, only called when CPUID
// reports them.
#include "backends/cpu/x86/flash_attention_impl.h"

namespace vitrt {
namespace x86 {

const FlashSimd* flash_simd_avx2() {
  static const FlashSimd t = fa::make_flash_table<xsimd::fma3<xsimd::avx2>>();
  return &t;
}

}  // namespace x86
}  // namespace vitrt
