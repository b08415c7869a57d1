// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LaViT's attention inner loops at AVX-512 (F/BW/VL/DQ); built with -mavx512*, only called when CPUID reports
// them.
#include "backends/cpu/x86/lavit_attention_impl.h"

namespace vitrt {
namespace x86 {

const LavitSimd* lavit_simd_avx512() {
  static const LavitSimd t = lv::make_lavit_table<xsimd::avx512bw>();
  return &t;
}

}  // namespace x86
}  // namespace vitrt
