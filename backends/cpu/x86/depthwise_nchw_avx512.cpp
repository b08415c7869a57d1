// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The image-layout depthwise plane kernel at AVX-512: blocks of up to 8 vectors of 16 columns in registers;
// built with -mavx512*. Output rows of at most 8 columns (7×7 planes) take the 8-column AVX2 vectors
// instead: as many instructions, but a 64-byte unaligned load always spans two cache lines, a 32-byte one
// half the time (7×7 k7 ×768 channels, one thread on the Zen 5: 0.092 ms at 16 columns, 0.066 ms at 8).
#include "backends/cpu/x86/depthwise_nchw_impl.h"
#include "backends/cpu/x86/even_lanes_avx2.h"
#include "backends/cpu/x86/vec_avx2.h"
#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {
namespace {

// Lanes 0, 2, .., 30 of the 32 floats a:b.
struct EvenLanes512 {
  static __m512 even(__m512 a, __m512 b) {
    const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, idx, b);
  }
};

}  // namespace

void depthwise_nchw_rows_avx512(const DepthwisePlane& p) {
  if (p.wo <= 8)
    depthwise_nchw_impl::rows<Avx2Ops, EvenLanes256>(p);
  else
    depthwise_nchw_impl::rows<Avx512Ops, EvenLanes512>(p);
}

}  // namespace x86
}  // namespace vitrt
