// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The channels-last depthwise row kernel with bf16 output (depthwise_nhwc.h), for ConvMlp at session
// precision bf16: the AVX-512 row kernel with another store, each strip's outputs rounded by vcvtneps2bf16
// (one instruction for 16 values, where the AVX-512F integer form of bf16_round took eleven); built with
// -mavx512bf16, only called when CPUID has AVX512-BF16 (x86_has_avx512_bf16, which session precision bf16
// requires).
#include <immintrin.h>

#include "backends/cpu/x86/depthwise_nhwc_impl.h"
#include "backends/cpu/x86/gelu_table_avx512.h"
#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {
namespace {

// bf16_round (packed_gemm_bf16.h) on 16 lanes: to nearest even, denormals to a zero of their sign, NaNs
// quieted — vcvtneps2bf16's rules.
inline __m256i round_bf16(__m512 v) {
  return (__m256i)_mm512_cvtneps_pbh(v);
}

// The rounded store; the activation before it is the fp32 row's (its erf GELU the table one).
struct Bf16Out {
  template <bool Partial>
  static void store(const DepthwiseRow& r, int64_t ox, int64_t c0, __m512 v, int valid) {
    uint16_t* y = r.dst_bf16 + ox * r.ld_bf16 + c0;
    if constexpr (Partial) {
      // The lanes past `valid` as zeros, and one more stored when C is odd: the zero that ends the last
      // pair (c0 + valid = C here).
      const __mmask16 keep = static_cast<__mmask16>((1u << valid) - 1);
      const int n = valid + static_cast<int>(r.c & 1);
      _mm256_mask_storeu_epi16(y, static_cast<__mmask16>((1u << n) - 1),
                               round_bf16(_mm512_maskz_mov_ps(keep, v)));
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), round_bf16(v));
    }
  }
};

}  // namespace

void depthwise_nhwc_row_bf16_avx512bf16(const DepthwiseRow& r) {
  depthwise_impl::row<Avx512TableGeluOps, 8, Bf16Out>(r);
}

}  // namespace x86
}  // namespace vitrt
