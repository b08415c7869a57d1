// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The image-layout depthwise plane kernel at AVX2: blocks of up to 8 vectors of 8 columns in registers; built
// with -mavx2 -mfma.
#include "backends/cpu/x86/depthwise_nchw_impl.h"
#include "backends/cpu/x86/even_lanes_avx2.h"
#include "backends/cpu/x86/vec_avx2.h"

namespace vitrt {
namespace x86 {

void depthwise_nchw_rows_avx2(const DepthwisePlane& p) {
  depthwise_nchw_impl::rows<Avx2Ops, EvenLanes256>(p);
}

}  // namespace x86
}  // namespace vitrt
