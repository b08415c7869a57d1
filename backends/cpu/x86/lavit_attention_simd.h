// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// LaViT's attention inner loops (docs/models.md §4.2), one table per ISA level: lavit_attention_impl.h writes
// them once on xsimd batches, lavit_attention_avx512.cpp and lavit_attention_avx2.cpp instantiate them.
// Callers split the work over threads and hand every call its own scratch; nothing here allocates or threads.
#include <cstdint>

namespace vitrt {
namespace x86 {

// Pre-softmax score rows finished and consumed: s (+ bias) is written to `scores` when given, then
// out = softmax(s)·V. Shared by SoftmaxAttention's score path and ReusedAttention.
struct SoftmaxPv {
  const float* s = nullptr;  // first score row (may be `p`: then finished in place)
  int64_t s_stride = 0;
  const float* bias = nullptr;  // [rows][nk] or null
  const float* mask = nullptr;  // [rows][nk] or null, added after the bias
  float* scores = nullptr;      // [rows][nk] or null
  const float* v = nullptr;     // first key's V row, head offset applied
  int64_t v_stride = 0;
  int64_t rows = 0, nk = 0, d = 0;
  float* out = nullptr;  // first output row, head offset applied
  int64_t out_stride = 0;
  float* p = nullptr;  // scratch [rows][nkp], 64-byte aligned
  int64_t nkp = 0;     // nk rounded up to 16
};

// One block of query rows of one (batch, head) of SoftmaxAttention: s = scale·q·kᵀ, then SoftmaxPv with s =
// p.
struct ScoreBlock {
  const float* q = nullptr;  // first query row, head offset applied
  int64_t q_stride = 0;
  const float* kt = nullptr;  // Kᵀ of the head, [d][nkp], zero-padded
  float scale = 1.0f;
  SoftmaxPv pv;  // s is ignored (the scores are computed into pv.p)
};

// T rows of ReusedAttention: t[i][0..nkp) = θ_b + prev[i]·Θᵀ.
struct ThetaRows {
  const float* prev = nullptr;     // [rows][nk]
  const float* theta_t = nullptr;  // Θᵀ [nk][nkp], zero-padded
  const float* theta_b = nullptr;  // [nkp], zero-padded
  int64_t rows = 0, nk = 0, nkp = 0;
  float* t = nullptr;  // [rows][nkp]
};

// C = A·B + bias (bias per row) over row blocks [mb_lo, mb_hi) of `mr` rows. A is packed at plan time as
// [ceil(m/mr)][k][mr] (rows past m zero); B as column panels of `nr` columns (the last one narrower, a
// multiple of 16), panel p at b + p·k·nr, laid out [k][panel width]. C rows are `ldc` apart; its columns [0,
// ncolp).
struct PanelGemm {
  const float* a = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;  // [m]
  float* c = nullptr;
  int64_t ldc = 0;
  int64_t m = 0, k = 0, ncolp = 0;
  int64_t mb_lo = 0, mb_hi = 0;
};

// One output row (oy) of AttentionResidual for one batch item, all ox and output heads:
//   a[c][j] = dw_b[c] + Σ_{ky,kx} dw[c,ky,kx]·s[c][(oy·k+ky)·w1 + ox·k+kx][j]
//   out[o][oy·w2 + ox][j] = γ[o]·(pw_b[o] + Σ_c pw[o,c]·a[c][j])
struct ResidualRow {
  const float* s = nullptr;  // the batch item's scores [h1][n1][nk]
  const float *dw = nullptr, *dw_b = nullptr, *pw = nullptr, *pw_b = nullptr, *gamma = nullptr;
  int64_t h1 = 0, h2 = 0, n1 = 0, nk = 0, w1 = 0, k = 0, w2 = 0, n2 = 0, oy = 0;
  float* out = nullptr;  // the batch item's output [h2][n2][nk]
  float* a = nullptr;    // scratch [h1][nk]
};

struct LavitSimd {
  int width;    // floats per vector
  int gemm_mr;  // rows per packed A panel of PanelGemm
  int gemm_nr;  // columns per full B panel of PanelGemm
  void (*softmax_pv)(const SoftmaxPv& a);
  void (*score_block)(const ScoreBlock& a);
  void (*theta_rows)(const ThetaRows& a);
  void (*panel_gemm)(const PanelGemm& g);
  void (*residual_row)(const ResidualRow& r);
};

const LavitSimd* lavit_simd_avx512();
const LavitSimd* lavit_simd_avx2();

}  // namespace x86
}  // namespace vitrt
