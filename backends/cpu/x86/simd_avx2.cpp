// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The inner loops at AVX2+FMA; built with -mavx2 -mfma, only called when CPUID reports them.
#include "backends/cpu/x86/simd_impl.h"

namespace vitrt {
namespace x86 {

const SimdTable* simd_table_avx2() {
  static const SimdTable t = make_table<xsimd::fma3<xsimd::avx2>>("avx2");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
