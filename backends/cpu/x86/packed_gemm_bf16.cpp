// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The bf16 packed GEMM's plan-time half (packed_gemm_bf16.h): the tile choice and the weight packing, built
// for the baseline ISA. The tiles and the run-time packing of A are in packed_gemm_avx512bf16.cpp.
#include "backends/cpu/x86/packed_gemm_bf16.h"

#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace x86 {

const GemmKernels* gemm_kernels_bf16_for(int64_t m, int64_t n, int64_t k_pairs, int tile,
                                         const GemmKernels* amx) {
  // AMX from 16 rows (one tile row; fewer would leave most of each tile's rows zero).
  if (amx && tile < 0 && m >= 16) return amx;
  // The bf16 tiles have the fp32 ones' shapes, in the same order, and a row of packed A is k_pairs * 4
  // bytes: the fp32 choice for k_pairs weighs the same L1 aliasing; bf16 panels are computed whole, so
  // their padding is counted in whole panels.
  static const bool split = x86_avx512_is_split();
  const GemmKernels* fp32 = gemm_kernels_choose(true, m, n, k_pairs, tile, /*narrows=*/false, split);
  for (int which = 0; which < 3; ++which)
    if (gemm_kernels_avx512(which) == fp32) return gemm_kernels_bf16(which);
  return gemm_kernels_bf16(0);
}

void gemm_bf16_pack_transposed(const float* w, int64_t n, int64_t k, int nr, float* dst) {
  const int64_t pairs = gemm_bf16_pairs(k);
  for (int64_t p = 0; p < gemm_panels(n, nr); ++p) {
    float* panel = dst + p * pairs * nr;
    for (int64_t j = 0; j < nr; ++j) {
      const int64_t col = p * nr + j;
      for (int64_t t = 0; t < pairs; ++t) {
        uint32_t pair = 0;  // zero past n and past k
        if (col < n) {
          const float* src = w + col * k;
          const uint32_t lo = bf16_round(src[2 * t]);
          const uint32_t hi = 2 * t + 1 < k ? bf16_round(src[2 * t + 1]) : 0;
          pair = lo | hi << 16;
        }
        std::memcpy(panel + t * nr + j, &pair, sizeof pair);
      }
    }
  }
}

void gemm_bf16_pack_b(const float* b, int64_t ldb, int64_t k, int64_t n, int nr, float* dst) {
  const int64_t pairs = gemm_bf16_pairs(k);
  for (int64_t p = 0; p < gemm_panels(n, nr); ++p) {
    float* panel = dst + p * pairs * nr;
    for (int64_t t = 0; t < pairs; ++t) {
      const float* even = b + 2 * t * ldb;
      const float* odd = 2 * t + 1 < k ? even + ldb : nullptr;
      for (int64_t j = 0; j < nr; ++j) {
        const int64_t col = p * nr + j;
        uint32_t pair = 0;  // zero past n and past k
        if (col < n)
          pair = bf16_round(even[col]) | (odd ? static_cast<uint32_t>(bf16_round(odd[col])) << 16 : 0u);
        std::memcpy(panel + t * nr + j, &pair, sizeof pair);
      }
    }
  }
}

}  // namespace x86
}  // namespace vitrt
