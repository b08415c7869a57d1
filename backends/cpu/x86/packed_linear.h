// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A Linear's weight packed once into the packed GEMM's column panels (packed_gemm.h), with its bias padded
// to whole panels, and a single-threaded y = act(x·Wᵀ + b) + residual over any rows: the building block of
// kernels that run a Linear on a slice of rows of their own (ConvMlp's bands, bench/mlp_pipeline.cpp).
#include <algorithm>
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

  PackedLinear(bool avx512, const float* w, int64_t n_, int64_t k_, int64_t rows) : n(n_), k(k_) {
    gemm = gemm_kernels_for(avx512, rows, n, k);
    packed = AlignedFloats(static_cast<size_t>(gemm_packed_floats(n, k, gemm->nr)));
    bias = AlignedFloats(static_cast<size_t>(gemm_panels(n, gemm->nr) * gemm->nr));
    if (packed) gemm_pack_transposed(w, n, k, gemm->nr, packed.data());
  }
  bool ok() const { return packed && bias; }

  // dst[m, n] (leading dimension ldc) = act(src[m, k]·Wᵀ + bias) + residual (leading dimension ldc).
  void run(const float* src, int64_t m, bool has_bias, GemmAct act, const float* residual, float* dst,
           int64_t ldc) const {
    for (int64_t p = 0; p < gemm_panels(n, gemm->nr); ++p) {
      GemmPanel gp;
      gp.a = src;
      gp.lda = k;
      gp.m = m;
      gp.k = k;
      gp.b = packed.data() + p * k * gemm->nr;
      gp.cols = std::min<int64_t>(gemm->nr, n - p * gemm->nr);
      gp.c = dst + p * gemm->nr;
      gp.ldc = ldc;
      gp.bias_cols = has_bias ? bias.data() + p * gemm->nr : nullptr;
      gp.act = act;
      if (residual) {
        gp.residual = residual + p * gemm->nr;
        gp.ldr = ldc;
      }
      gemm->panel(gp);
    }
  }
};

}  // namespace x86
}  // namespace vitrt
