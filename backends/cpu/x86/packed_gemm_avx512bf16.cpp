// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The packed GEMM's AVX512-BF16 tiles (packed_gemm_bf16.h) and the run-time rounding of A into pairs; built
// with -mavx512bf16 on top of the AVX-512 flags, only called when CPUID has AVX512-BF16.
#include <algorithm>

#include "backends/cpu/x86/gelu_table_avx512.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/packed_gemm_impl.h"
#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {
namespace {

// fma_tile's ops over bf16 pairs kept in float registers: a broadcast takes one pair of A (4 bytes) to every
// lane, and fma adds both products of each lane's pair to its fp32 sum (vdpbf16ps).
struct Bf16PairOps {
  using V = __m512;
  static constexpr int kWidth = 16;
  static V load(const float* p) { return _mm512_load_ps(p); }
  static V set1(float pair) { return _mm512_set1_ps(pair); }  // the bits, not a value
  static V fma(V a, V b, V c) { return _mm512_dpbf16_ps(c, (__m512bh)a, (__m512bh)b); }
};

template <int Rows, int Vecs>
struct Bf16Vec512 : Avx512TableGeluOps {  // the epilogue's erf GELU from the table (gelu_table_avx512.h)
  static constexpr int kRows = Rows, kVecs = Vecs;
  using ProductOps = Bf16PairOps;
};

}  // namespace

const GemmKernels* gemm_kernels_bf16(int which) {
  static const GemmKernels k[] = {
      {"avx512-bf16 8x48", 8, 48, &gemm_impl::panel<Bf16Vec512<8, 3>>},
      {"avx512-bf16 14x32", 14, 32, &gemm_impl::panel<Bf16Vec512<14, 2>>},
      {"avx512-bf16 6x64", 6, 64, &gemm_impl::panel<Bf16Vec512<6, 4>>},
  };
  return &k[which < 0 || which > 2 ? 0 : which];
}

void gemm_bf16_pack_rows(const float* src, int64_t ld, int64_t rows, int64_t k, float* dst, int64_t ldd) {
  // vcvtne2ps2bf16 rounds 32 floats to nearest even; its second operand gives the low 16 bf16, so the result
  // is the 32 values in order, i.e. 16 pairs (k, k + 1). A tail is read through a mask (zeros past k).
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * ld;
    float* d = dst + r * ldd;
    int64_t t = 0;
    for (; t + 32 <= k; t += 32) {
      const __m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(s + t + 16), _mm512_loadu_ps(s + t));
      _mm512_storeu_ps(d + t / 2, (__m512)h);
    }
    if (t < k) {
      const int64_t left = k - t;
      const __mmask16 lo = static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1);
      const __mmask16 hi = static_cast<__mmask16>(left <= 16 ? 0 : (1u << (left - 16)) - 1);
      const __m512bh h =
          _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, s + t + 16), _mm512_maskz_loadu_ps(lo, s + t));
      const int64_t pairs = (left + 1) / 2;
      _mm512_mask_storeu_ps(d + t / 2, static_cast<__mmask16>((1u << pairs) - 1), (__m512)h);
    }
  }
}

}  // namespace x86
}  // namespace vitrt
