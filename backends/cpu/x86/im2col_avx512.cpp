// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// im2col panels with AVX-512 masked loads, stores, permutes (stride 2) and gathers; built with -mavx512*.
#include <algorithm>
#include <cstdint>

#include "backends/cpu/x86/im2col_impl.h"

namespace vitrt {
namespace x86 {
namespace {

struct Ops512 {
  static __mmask16 mask(int64_t n) {
    return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
  }
  static void zero(float* d, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) _mm512_mask_storeu_ps(d + i, mask(n - i), _mm512_setzero_ps());
  }
  static void copy(float* d, const float* s, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = mask(n - i);
      _mm512_mask_storeu_ps(d + i, m, _mm512_maskz_loadu_ps(m, s + i));
    }
  }
  // d[i] = s[i·stride]
  static void gather(float* d, const float* s, int64_t stride, int64_t n) {
    if (stride == 2) {  // two masked loads and a permute per 16 floats: cheaper than a gather
      const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      for (int64_t i = 0; i < n; i += 16) {
        const int64_t src_floats = 2 * std::min<int64_t>(16, n - i) - 1;  // s[2i] .. s[2i + src_floats - 1]
        const __m512 lo = _mm512_maskz_loadu_ps(mask(src_floats), s + 2 * i);
        const __m512 hi = _mm512_maskz_loadu_ps(mask(std::max<int64_t>(0, src_floats - 16)), s + 2 * i + 16);
        _mm512_mask_storeu_ps(d + i, mask(n - i), _mm512_permutex2var_ps(lo, even, hi));
      }
      return;
    }
    if (stride > INT32_MAX / 16) {  // lane offsets would not fit the gather's 32-bit indices
      for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
      return;
    }
    const __m512i idx =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32(static_cast<int>(stride)));
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = mask(n - i);
      const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, s + i * stride, 4);
      _mm512_mask_storeu_ps(d + i, m, v);
    }
  }
};

}  // namespace

void im2col_panel_avx512(const Im2colPanel& p) {
  im2col_impl::panel<Ops512>(p);
}

}  // namespace x86
}  // namespace vitrt
