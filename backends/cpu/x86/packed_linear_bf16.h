// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// PackedLinear (packed_linear.h) on the AVX512-BF16 packed GEMM (packed_gemm_bf16.h), for session precision
// bf16: the weight rounded and packed in bf16 pairs once, and each run rounds its rows of x into pairs in a
// scratch the caller gives (a share of its workspace) before the product; bias, activation and residual
// stay fp32. Only construct it where the context's bf16 flag is set (x86_has_avx512_bf16()).
#include <cstdint>

#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"

namespace vitrt {
namespace x86 {

// w [n, k] (PyTorch layout) packed in pairs for the tile suited to `rows` rows at a time (the AMX kernel
// `amx` where it applies: gemm_kernels_bf16_for); `bias` starts zeroed.
struct PackedLinearBf16 {
  const GemmKernels* gemm = nullptr;
  AlignedFloats packed, bias;
  int64_t n = 0, k = 0, kp = 0;  // kp: k's pairs

  PackedLinearBf16(const float* w, int64_t n_, int64_t k_, int64_t rows, int tile = -1,
                   const GemmKernels* amx = nullptr)
      : n(n_), k(k_), kp(gemm_bf16_pairs(k_)) {
    gemm = gemm_kernels_bf16_for(rows, n, kp, tile, amx);
    packed = AlignedFloats(static_cast<size_t>(gemm_packed_floats(n, kp, gemm->nr)));
    bias = AlignedFloats(static_cast<size_t>(gemm_panels(n, gemm->nr) * gemm->nr));
    if (packed) gemm_bf16_pack_transposed(w, n, k, gemm->nr, packed.data());
  }
  bool ok() const { return packed && bias; }
  // The scratch floats run needs for m rows.
  int64_t scratch_floats(int64_t m) const { return m * kp; }

  // dst[m, n] (leading dimension ldc) = act(src[m, k]·Wᵀ + bias) + residual (leading dimension ldc), src's
  // rows rounded into `scratch` (scratch_floats(m) floats) first.
  void run(const float* src, int64_t m, bool has_bias, GemmAct act, const float* residual, float* dst,
           int64_t ldc, float* scratch) const {
    gemm_bf16_pack_rows(src, k, m, k, scratch, kp);
    run_pairs(scratch, m, has_bias, act, residual, dst, ldc);
  }
  // The same from rows already rounded into pairs (m rows of kp pairs, as gemm_bf16_pack_rows lays them
  // out), for a producer that writes bf16 itself (ConvMlp's depthwise conv).
  void run_pairs(const float* pairs, int64_t m, bool has_bias, GemmAct act, const float* residual, float* dst,
                 int64_t ldc) const {
    GemmEpilogue e;
    e.bias_cols = has_bias ? bias.data() : nullptr;
    e.act = act;
    e.residual = residual;
    e.ldr = ldc;
    gemm_packed_product(gemm, pairs, kp, m, kp, packed.data(), n, dst, ldc, e);
  }
};

}  // namespace x86
}  // namespace vitrt
