// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LaViT's attention inner loops at AVX2+FMA; built with -mavx2 -mfma, only called when CPUID reports them.
#include "backends/cpu/x86/lavit_attention_impl.h"

namespace vitrt {
namespace x86 {

const LavitSimd* lavit_simd_avx2() {
  static const LavitSimd t = lv::make_lavit_table<xsimd::fma3<xsimd::avx2>>();
  return &t;
}

}  // namespace x86
}  // namespace vitrt
