// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The channels-last depthwise row kernel at AVX-512: strips of 8 pixels × 16 channels in registers, its erf
// GELU the table one (gelu_table_avx512.h); built with -mavx512*, only called when CPUID has them.
// The bf16-output form is depthwise_nhwc_avx512bf16.cpp.
#include <immintrin.h>

#include "backends/cpu/x86/depthwise_nhwc_impl.h"
#include "backends/cpu/x86/gelu_table_avx512.h"
#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {

void depthwise_nhwc_row_avx512(const DepthwiseRow& r) {
  depthwise_impl::row<Avx512TableGeluOps, 8>(r);
}

}  // namespace x86
}  // namespace vitrt
