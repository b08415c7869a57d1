// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Plain SoftmaxAttention's flash-attention loops at AVX-512 (F/BW/VL/DQ); built with -mavx512*, only called
// when CPUID reports them.
#include "backends/cpu/x86/flash_attention_impl.h"

namespace vitrt {
namespace x86 {

const FlashSimd* flash_simd_avx512() {
  static const FlashSimd t = fa::make_flash_table<xsimd::avx512bw>();
  return &t;
}

}  // namespace x86
}  // namespace vitrt
