// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The element loops of the x86 PerformerAttention kernel (performer_attention.cpp), one table per ISA level:
// performer_attention_impl.h writes them once on xsimd batches, performer_attention_avx512.cpp and
// performer_attention_avx2.cpp instantiate them. The products themselves run on the packed GEMM. Row lengths
// are any n >= 1 (the last partial vector goes through a zero-padded register). Nothing here allocates or
// threads.
#include <cstdint>

#include "backends/cpu/ref/performer_features.h"

namespace vitrt {
namespace x86 {

struct PerformerSimd {
  const char* name;
  // dst[r][t] = dn·src[r·lds + t] for t < d, r < rows; sum_sq[r] = Σ_t src[r·lds + t]² (float).
  void (*scale_rows)(const float* src, int64_t lds, int64_t rows, int64_t d, float dn, float* dst,
                     float* sum_sq);
  // max_j u[j], j < n.
  float (*row_max)(const float* u, int64_t n);
  // u[j] = ratio·(exp((u[j] − g) − max) + 1e-4), j < n (ref::performer_softmax_feature).
  void (*softmax_features)(float* u, int64_t n, float g, float max, const ref::PerformerScalars& s);
  // u[j] = relu(u[j]) + 1e-3, j < n.
  void (*relu_features)(float* u, int64_t n);
  // acc[j] += row[j], j < n.
  void (*add_row)(const float* row, int64_t n, float* acc);
  // Σ_j a[j]·b[j], j < n.
  float (*dot)(const float* a, const float* b, int64_t n);
};

const PerformerSimd* performer_simd_avx512();
const PerformerSimd* performer_simd_avx2();

}  // namespace x86
}  // namespace vitrt
