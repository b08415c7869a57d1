// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The channels-last depthwise row kernel at AVX-512: strips of 8 pixels × 16 channels in registers; built
// with -mavx512*, only called when CPUID has them. Also its bf16-output form (depthwise_nhwc.h).
#include <immintrin.h>

#include "backends/cpu/x86/depthwise_nhwc_impl.h"
#include "backends/cpu/x86/gelu_table_avx512.h"
#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {
namespace {

// bf16_round (packed_gemm_bf16.h) on 16 lanes in AVX-512F integer ops, the bits vcvtne2ps2bf16 gives
// without needing AVX512-BF16: to nearest even (add 0x7fff plus the kept low bit, keep the high half),
// denormals to a zero of their sign, NaNs quieted.
inline __m256i round_bf16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __mmask16 denormal = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
  r = _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
  r = _mm512_mask_and_epi32(r, denormal, u, _mm512_set1_epi32(static_cast<int>(0x80000000u)));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

// The outputs are rounded to bf16 (8 significant bits), so the erf GELU is the table one
// (gelu_table_avx512.h: within 9e-8·|x| of the exact GELU, about half the instructions of the erf and exp of
// gelu_vec::gelu_erf, which the fp32 row keeps); the other activations are the fp32 row's.
struct Bf16Out {
  template <int S>
  static void activate(GemmAct act, __m512 (&acc)[S]) {
    if (act != GemmAct::kGeluErf) return depthwise_impl::activate<Avx512Ops, S>(act, acc);
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) acc[s] = gelu_table::gelu_erf(acc[s]);
  }

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

void depthwise_nhwc_row_avx512(const DepthwiseRow& r) {
  depthwise_impl::row<Avx512Ops, 8>(r);
}

void depthwise_nhwc_row_bf16_avx512(const DepthwiseRow& r) {
  depthwise_impl::row<Avx512Ops, 8, Bf16Out>(r);
}

}  // namespace x86
}  // namespace vitrt
