// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The inner loops of the x86 LinearAttention kernel (SOFT), one table per ISA level: linear_attention_impl.h
// writes them once on xsimd batches, linear_attention_avx512.cpp and linear_attention_avx2.cpp instantiate
// them.
//
// Every loop vectorises across output columns and keeps the reference kernel's per-element order of summation
// (one accumulator per output element, terms added in the reference's order, with FMA). Column counts handed
// to them are whole vectors: the kernel pads m and d up to multiples of `width` with zeros in its scratch
// copies. Nothing here allocates or threads.
#include <cstdint>

namespace vitrt {
namespace x86 {

// lm[l][0..dp) = Σ_{c, ky, kx} w[o][c][ky][kx] · (q[token(l, ky, kx)][c] · scale): the r×r stride-r landmark
// conv over one head's tokens viewed as a [d,H,W] image, with w packed as wp[(c·r + ky)·r + kx][o] (o < dp,
// zero-padded).
struct LandmarkConvArgs {
  const float* q = nullptr;  // token 0, this head's first column
  int64_t q_stride = 0;      // between tokens (C)
  float scale = 1.0f;
  const float* wp = nullptr;
  int64_t d = 0, dp = 0, r = 0, width = 0, m_h = 0, m_w = 0;
  float* lm = nullptr;  // [m_h·m_w][dp]
};

// out[i][j] = attn[i − i0][j] + Σ_{ky, kx in the image} w[ky][kx] · v[(y+ky−k/2, x+kx−k/2)][j] for tokens
// i0 ≤ i < i1 and j < d: the per-head depthwise V conv added to the attention result.
struct VConvArgs {
  const float* v = nullptr;  // [H·W][dp], zero-padded beyond d
  int64_t dp = 0, d = 0;
  const float* w = nullptr;  // [k][k]
  int64_t k = 0, height = 0, width = 0;
  int64_t i0 = 0, i1 = 0;
  const float* attn = nullptr;  // [i1 − i0][dp]
  float* out = nullptr;         // token i0, this head's first column
  int64_t out_stride = 0;       // between tokens (C)
};

struct LinearAttentionSimd {
  const char* name;
  int width;  // floats per vector
  // c[i][0..cols) = (accumulate ? c[i][..] : 0) + Σ_{t<k, in order} a[i·ars + t·acs] · b[t·ldb + ..], i <
  // rows.
  void (*gemm)(const float* a, int64_t ars, int64_t acs, const float* b, int64_t ldb, int64_t rows, int64_t k,
               int64_t cols, bool accumulate, float* c, int64_t ldc);
  // c[i][j] = exp(−Σ_{t<d} (a[i·ars + t·acs]·scale − bt[t·ldb + j])² / 2) for j < cols, then zero for
  // valid ≤ j < cols (the padding).
  void (*gaussian)(const float* a, int64_t ars, int64_t acs, float scale, const float* bt, int64_t ldb,
                   int64_t rows, int64_t d, int64_t cols, int64_t valid, float* c, int64_t ldc);
  void (*landmark_conv)(const LandmarkConvArgs& a);
  void (*v_conv_add)(const VConvArgs& a);
  // `iterations` × v = 2v − (v·p)·v on the top-left m×m block of row-major [.][mp] matrices whose columns
  // m ≤ j < mp are zero. work: 2·m·mp floats.
  void (*newton_iterate)(const float* p, int64_t m, int64_t mp, int32_t iterations, float* v, float* work);
};

const LinearAttentionSimd* linear_attention_simd_avx512();
const LinearAttentionSimd* linear_attention_simd_avx2();

}  // namespace x86
}  // namespace vitrt
