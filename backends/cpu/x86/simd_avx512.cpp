// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The inner loops at AVX-512 (F/BW/VL/DQ); built with -mavx512*, only called when CPUID reports them.
#include "backends/cpu/x86/simd_impl.h"

namespace vitrt {
namespace x86 {

const SimdTable* simd_table_avx512() {
  static const SimdTable t = make_table<xsimd::avx512bw>("avx512");
  return &t;
}

}  // namespace x86
}  // namespace vitrt
