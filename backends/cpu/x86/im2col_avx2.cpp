// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// im2col panels with AVX2 masked loads, stores, deinterleaves (stride 2) and gathers; built with -mavx2
// -mfma.
#include <algorithm>
#include <cstdint>

#include "backends/cpu/x86/even_lanes_avx2.h"
#include "backends/cpu/x86/im2col_impl.h"

namespace vitrt {
namespace x86 {
namespace {

struct Ops256 {
  static __m256i mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(n, 8))),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static void zero(float* d, int64_t n) {
    for (int64_t i = 0; i < n; i += 8) _mm256_maskstore_ps(d + i, mask(n - i), _mm256_setzero_ps());
  }
  static void copy(float* d, const float* s, int64_t n) {
    for (int64_t i = 0; i < n; i += 8) {
      const __m256i m = mask(n - i);
      _mm256_maskstore_ps(d + i, m, _mm256_maskload_ps(s + i, m));
    }
  }
  // d[i] = s[i·stride]
  static void gather(float* d, const float* s, int64_t stride, int64_t n) {
    if (stride == 2) {  // two masked loads and a deinterleave per 8 floats: cheaper than a gather
      for (int64_t i = 0; i < n; i += 8) {
        const int64_t src_floats = 2 * std::min<int64_t>(8, n - i) - 1;  // s[2i] .. s[2i + src_floats - 1]
        const __m256 lo = _mm256_maskload_ps(s + 2 * i, mask(src_floats));
        const __m256 hi = _mm256_maskload_ps(s + 2 * i + 8, mask(src_floats - 8));
        _mm256_maskstore_ps(d + i, mask(n - i), EvenLanes256::even(lo, hi));
      }
      return;
    }
    if (stride > INT32_MAX / 8) {  // lane offsets would not fit the gather's 32-bit indices
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
      return;
    }
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32(static_cast<int>(stride)));
    for (int64_t i = 0; i < n; i += 8) {
      const __m256i m = mask(n - i);
      const __m256 v =
          _mm256_mask_i32gather_ps(_mm256_setzero_ps(), s + i * stride, idx, _mm256_castsi256_ps(m), 4);
      _mm256_maskstore_ps(d + i, m, v);
    }
  }
};

}  // namespace

void im2col_panel_avx2(const Im2colPanel& p) {
  im2col_impl::panel<Ops256>(p);
}

}  // namespace x86
}  // namespace vitrt
