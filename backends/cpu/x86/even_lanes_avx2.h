// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A stride-2 deinterleave of AVX2 registers (the NCHW depthwise kernel's fill, depthwise_nchw_impl.h).
// Include only from *_avx2.cpp / *_avx512.cpp files (built with -mavx2 or more).
#include <immintrin.h>

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
}  // namespace x86
}  // namespace vitrt
