// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The activation of the AVX-512 channels-last depthwise rows (depthwise_nhwc.h: the fp32 row and the
// bf16-output row): the erf GELU from the table of gelu_table_avx512.h (within 9e-8·|x| of the exact GELU,
// about half the instructions of gelu_vec::gelu_erf), every other activation depthwise_impl::activate's. Only
// for files built with -mavx512*.
#include <immintrin.h>

#include "backends/cpu/x86/depthwise_nhwc_impl.h"
#include "backends/cpu/x86/gelu_table_avx512.h"
#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {
namespace depthwise_impl {

struct TableGeluActivation {
  template <int S>
  static void activate(GemmAct act, __m512 (&acc)[S]) {
    if (act != GemmAct::kGeluErf) return depthwise_impl::activate<Avx512Ops, S>(act, acc);
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) acc[s] = gelu_table::gelu_erf(acc[s]);
  }
};

}  // namespace depthwise_impl
}  // namespace x86
}  // namespace vitrt
