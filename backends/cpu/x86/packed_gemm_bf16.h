// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The packed GEMM in bf16 on AVX512-BF16 (session precision bf16, docs/architecture.md): C[M, N] = A[M, K]·B
// with both operands rounded to bf16 (round to nearest even) and the products summed in fp32. vdpbf16ps
// multiplies pairs: each 32-bit lane of its operands holds two bf16 values, of k and k + 1, and both products
// are added to the lane's fp32 sum. So both operands are packed by K pairs, zero past K:
//  * A as rows of gemm_bf16_pairs(K) pairs (gemm_bf16_pack_rows, at run time, into the workspace);
//  * B as the fp32 kernel's column panels (packed_gemm.h) with a pair where a float was: panel p holds
//    gemm_bf16_pairs(K) rows of NR pairs (gemm_bf16_pack_transposed, at plan time).
// A pair takes the 4 bytes of a float, so packed operands are stored in float buffers and the fp32 kernel's
// GemmPanel, GemmKernels and gemm_packed_product carry over unchanged with k counted in pairs. The tiles and
// epilogues (bias, activation, residual) are the fp32 ones; only the inner product differs.
#include <cstdint>
#include <cstring>

#include "backends/cpu/x86/packed_gemm.h"

namespace vitrt {
namespace x86 {

// The K pairs of a row of K values.
inline int64_t gemm_bf16_pairs(int64_t k) {
  return (k + 1) / 2;
}

// x rounded to bf16 to nearest even, as vcvtne2ps2bf16 does it: denormals flush to zero (of x's sign), NaNs
// stay quiet NaNs, values that round past the largest bf16 become infinities.
inline uint16_t bf16_round(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0) return static_cast<uint16_t>((u >> 16) & 0x8000u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16_to_float(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// The AVX512-BF16 tiles, rows × columns of C: 8 × 48, 14 × 32 and 6 × 64 (which = 0..2), as the fp32 ones.
// Only call them where x86_has_avx512_bf16() (x86_backend.h).
const GemmKernels* gemm_kernels_bf16(int which);
// The tile for C[m, n] over k_pairs pairs: `amx` (Context::amx: the AMX kernel, or null) where m fills at
// least one of its tile rows, else the fp32 choice (gemm_kernels_for) for the same shape; a forced AVX-512
// `tile` (0..2) wins over AMX.
const GemmKernels* gemm_kernels_bf16_for(int64_t m, int64_t n, int64_t k_pairs, int tile = -1,
                                         const GemmKernels* amx = nullptr);
// AMX-TILE + AMX-BF16: C in 32 × 32 blocks on the tile registers (packed_gemm_amx_impl.h), on the panels of
// the 14 × 32 tile (NR = 32), which also runs the GemmPanel forms it does not. Only call it where
// x86_has_amx_bf16() (x86_backend.h).
const GemmKernels* gemm_kernels_amx();
// The same kernel on a C++ model of the tile instructions (packed_gemm_amx_model.h), for the tests on CPUs
// without AMX (AVX512-BF16 is enough); and whether the model saw any thread use a tile as the hardware
// would refuse to (reset clears it).
const GemmKernels* gemm_kernels_amx_model();
bool gemm_amx_model_faulted(bool reset);

// Row-major W [n, k] (C = A·Wᵀ) rounded and packed into ceil(n / nr) panels of pairs; dst holds
// gemm_packed_floats(n, gemm_bf16_pairs(k), nr) floats.
void gemm_bf16_pack_transposed(const float* w, int64_t n, int64_t k, int nr, float* dst);
// Row-major B [k, n] (leading dimension ldb: C = A·B) rounded and packed into ceil(n / nr) panels of pairs
// (rows 2t and 2t + 1 of a column make pair t), zero past n and past k; dst holds
// gemm_packed_floats(n, gemm_bf16_pairs(k), nr) floats. Plain C++ (for B operands built at run time that are
// small next to the product, such as SOFT's W = K2⁺·(K1ᵀ·V)).
void gemm_bf16_pack_b(const float* b, int64_t ldb, int64_t k, int64_t n, int nr, float* dst);
// Rows [0, rows) of src (k floats each, ld apart) rounded into rows of gemm_bf16_pairs(k) pairs, ldd pairs
// apart. AVX512-BF16 code: only where x86_has_avx512_bf16().
void gemm_bf16_pack_rows(const float* src, int64_t ld, int64_t rows, int64_t k, float* dst, int64_t ldd);

}  // namespace x86
}  // namespace vitrt
