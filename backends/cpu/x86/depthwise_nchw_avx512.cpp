// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The image-layout depthwise plane kernel at AVX-512: blocks of up to 8 vectors of 16 columns in registers;
// built with -mavx512*.
#include "backends/cpu/x86/depthwise_nchw_impl.h"
#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {

void depthwise_nchw_rows_avx512(const DepthwisePlane& p) {
  depthwise_nchw_impl::rows<Avx512Ops>(p);
}

}  // namespace x86
}  // namespace vitrt
