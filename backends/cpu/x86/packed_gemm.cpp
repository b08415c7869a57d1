// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cpu/x86/packed_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace x86 {

const GemmKernels* gemm_kernels_choose(bool avx512, int64_t m, int64_t n, int64_t k, int tile, bool narrows,
                                       bool split) {
  if (!avx512) return gemm_kernels_avx2();
  if (tile >= 0) return gemm_kernels_avx512(tile);  // X86Options::gemm_tile: for measurements
  // The tile that pads m × n the least, preferring 6 × 64 then 8 × 48 on ties. The 14-row tile reads 14 rows
  // of A at once: when the row stride is a multiple of 4 KB they all fall in one L1 set (12 ways) and evict
  // each other on every k, so it is only taken when it wastes clearly less. Where 512-bit FMAs run as two
  // halves (Zen 4), 6 × 64, with the fewest broadcasts of A per FMA, ran 2-15% faster than the others on
  // DeiT/SOFT/LaViT shapes at batch 8 (vitrt_gemm_compare, docs/architecture.md §7): the others must pad 15%
  // less to be taken there, and the columns are counted as the tiles compute them: fp32 panels run a last
  // panel narrower than nr on fewer vectors (packed_gemm_impl.h's Narrow), so only whole vectors are padded
  // (N = 96 on 6 × 64: 64 + 32 columns, not 128; 2.5-4.5% faster than 8 × 48 on Swin-T's stage-1 products).
  // Elsewhere the count stays whole panels: that is what chose the tiles measured on Zen 5 and Intel.
  const GemmKernels* best = nullptr;
  double best_cost = 0;
  for (int which : {2, 0, 1}) {
    const GemmKernels* g = gemm_kernels_avx512(which);
    const int64_t cols = split && narrows ? (n + 15) / 16 * 16 : (n + g->nr - 1) / g->nr * g->nr;
    double cost = static_cast<double>((m + g->mr - 1) / g->mr * g->mr) * cols;
    if (g->mr > 12 && (k * 4) % 4096 == 0) cost *= 1.6;
    if (split && which != 2) cost *= 1.15;
    if (!best || cost < best_cost) best = g, best_cost = cost;
  }
  return best;
}

const GemmKernels* gemm_kernels_for(bool avx512, int64_t m, int64_t n, int64_t k, int tile) {
  static const bool split = x86_avx512_is_split();
  return gemm_kernels_choose(avx512, m, n, k, tile, /*narrows=*/true, split);
}

void gemm_pack_transposed_scaled(const float* w, int64_t ldw, int64_t n, int64_t k, float scale, int nr,
                                 float* dst) {
  for (int64_t p = 0; p < gemm_panels(n, nr); ++p) {
    float* panel = dst + p * k * nr;
    for (int64_t j = 0; j < nr; ++j) {
      const int64_t col = p * nr + j;
      if (col >= n) {
        for (int64_t t = 0; t < k; ++t) panel[t * nr + j] = 0.0f;
        continue;
      }
      const float* src = w + col * ldw;
      for (int64_t t = 0; t < k; ++t) panel[t * nr + j] = src[t] * scale;
    }
  }
}

void gemm_pack_transposed(const float* w, int64_t n, int64_t k, int nr, float* dst) {
  gemm_pack_transposed_scaled(w, k, n, k, 1.0f, nr, dst);  // x·1 is exact: the same floats
}

void gemm_pack_rows(const float* b, int64_t ldb, int64_t k, int64_t n, int nr, float* dst) {
  for (int64_t p = 0; p < gemm_panels(n, nr); ++p) {
    const int64_t cols = std::min<int64_t>(nr, n - p * nr);
    float* panel = dst + p * k * nr;
    for (int64_t t = 0; t < k; ++t) {
      std::memcpy(panel + t * nr, b + t * ldb + p * nr, static_cast<size_t>(cols) * sizeof(float));
      std::fill(panel + t * nr + cols, panel + (t + 1) * nr, 0.0f);
    }
  }
}

void gemm_pack_a(const float* a, int64_t lda, int64_t m, int64_t k, int mr, float* dst) {
  const int64_t mp = gemm_packed_a_rows(m, mr), block = gemm_k_block(k);
  for (int64_t k0 = 0; k0 < k; k0 += block) {
    const int64_t kc = std::min(block, k - k0);
    for (int64_t t = 0; t * mr < mp; ++t) {
      float* tile = dst + k0 * mp + t * mr * kc;
      for (int64_t j = 0; j < kc; ++j)
        for (int64_t r = 0; r < mr; ++r) {
          const int64_t row = t * mr + r;
          tile[j * mr + r] = row < m ? a[row * lda + k0 + j] : 0.0f;
        }
    }
  }
}

void gemm_packed_product(const GemmKernels* g, const float* a, int64_t lda, int64_t rows, int64_t k,
                         const float* packed_b, int64_t n, float* c, int64_t ldc, const GemmEpilogue& e) {
  // B, not A, is what is read again per row block (an m = 784 square product would otherwise read all 2.4 MB
  // of A once per panel: 60 MB per product instead of about 12).
  const int64_t mc =
      std::max<int64_t>(g->mr, kGemmRowBlockBytes / (std::max<int64_t>(k, 1) * 4) / g->mr * g->mr);
  for (int64_t r0 = 0; r0 < rows; r0 += mc)
    for (int64_t p = 0; p < gemm_panels(n, g->nr); ++p) {
      GemmPanel gp;
      gp.cols = std::min<int64_t>(g->nr, n - p * g->nr);
      const int64_t r1 = std::min(rows, r0 + mc);
      gp.a = a + r0 * lda;
      gp.lda = lda;
      gp.m = r1 - r0;
      gp.k = k;
      gp.b = packed_b + p * k * g->nr;
      gp.c = c + r0 * ldc + p * g->nr;
      gp.ldc = ldc;
      gp.bias_cols = e.bias_cols ? e.bias_cols + p * g->nr : nullptr;
      gp.act = e.act;
      if (e.residual) {
        gp.residual = e.residual + r0 * e.ldr + p * g->nr;
        gp.ldr = e.ldr;
      }
      g->panel(gp);
    }
}

}  // namespace x86
}  // namespace vitrt
