// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The image-layout depthwise plane kernel at AVX2: blocks of up to 8 vectors of 8 columns in registers; built
// with -mavx2 -mfma.
#include "backends/cpu/x86/depthwise_nchw_impl.h"
#include "backends/cpu/x86/vec_avx2.h"

namespace vitrt {
namespace x86 {
namespace {

// Lanes 0, 2, .., 14 of the 16 floats a:b: even lanes per 128-bit half, then the halves put in order.
struct EvenLanes256 {
  static __m256 even(__m256 a, __m256 b) {
    const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  }
};

}  // namespace

void depthwise_nchw_rows_avx2(const DepthwisePlane& p) {
  depthwise_nchw_impl::rows<Avx2Ops, EvenLanes256>(p);
}

}  // namespace x86
}  // namespace vitrt
