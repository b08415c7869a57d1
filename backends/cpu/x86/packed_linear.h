// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A Linear's weight packed once into the packed GEMM's column panels (packed_gemm.h), with its bias padded
// to whole panels, and a single-threaded y = act(x·Wᵀ + b) + residual over any rows: the building block of
// kernels that run a Linear on a slice of rows of their own (ConvMlp's bands, bench/mlp_pipeline.cpp).
#include <cstdint>

#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/packed_gemm.h"

namespace vitrt {
namespace x86 {

// w [n, k] (PyTorch layout) packed for the tile suited to `rows` rows at a time; `bias` starts zeroed.
struct PackedLinear {
  const GemmKernels* gemm = nullptr;
  AlignedFloats packed, bias;
  int64_t n = 0, k = 0;

  PackedLinear(bool avx512, const float* w, int64_t n_, int64_t k_, int64_t rows, int tile = -1)
      : n(n_), k(k_) {
    gemm = gemm_kernels_for(avx512, rows, n, k, tile);
    packed = AlignedFloats(static_cast<size_t>(gemm_packed_floats(n, k, gemm->nr)));
    bias = AlignedFloats(static_cast<size_t>(gemm_panels(n, gemm->nr) * gemm->nr));
    if (packed) gemm_pack_transposed(w, n, k, gemm->nr, packed.data());
  }
  bool ok() const { return packed && bias; }

  // dst[m, n] (leading dimension ldc) = act(src[m, k]·Wᵀ + bias) + residual (leading dimension ldc).
  void run(const float* src, int64_t m, bool has_bias, GemmAct act, const float* residual, float* dst,
           int64_t ldc) const {
    GemmEpilogue e;
    e.bias_cols = has_bias ? bias.data() : nullptr;
    e.act = act;
    e.residual = residual;
    e.ldr = ldc;
    gemm_packed_product(gemm, src, k, m, k, packed.data(), n, dst, ldc, e);
  }
};

}  // namespace x86
}  // namespace vitrt
