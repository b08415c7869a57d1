// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The channels-last depthwise row kernel at AVX2: strips of 6 pixels × 8 channels in registers, its erf GELU
// the table one (gelu_table_avx2.h); built with -mavx2 -mfma.
#include "backends/cpu/x86/depthwise_nhwc_impl.h"
#include "backends/cpu/x86/gelu_table_avx2.h"
#include "backends/cpu/x86/vec_avx2.h"

namespace vitrt {
namespace x86 {

void depthwise_nhwc_row_avx2(const DepthwiseRow& r) {
  depthwise_impl::row<Avx2TableGeluOps, 6>(r);
}

}  // namespace x86
}  // namespace vitrt
