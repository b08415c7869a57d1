// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The inner loops of the x86 FastformerAttention kernel, one table per ISA level: fastformer_impl.h writes
// them once on xsimd batches, fastformer_avx512.cpp and fastformer_avx2.cpp instantiate them. Rows are
// tokens of C channels (row stride C); channel c belongs to head c/d. Nothing here allocates or threads.
#include <cstdint>

namespace vitrt {
namespace x86 {

struct FastformerSimd {
  const char* name;
  int width;  // floats per vector
  // s[r·heads + h] = scale·(bias[h] + Σ_c w[h·C + c]·(x[r·C + c]·mul[c])) for r < rows, h < heads (no mul
  // when it is null): the additive attention's per-head score of each token (query_att of q, key_att of k∘p).
  void (*scores)(const float* x, int64_t rows, int64_t c, const float* mul, const float* w, const float* bias,
                 int64_t heads, float scale, float* s);
  // acc[c] += Σ_{r<rows} e[r·heads + c/d]·x[r·C + c] for c < C: a token block's softmax-weighted pooling.
  void (*pool)(const float* x, int64_t rows, int64_t c, int64_t d, const float* e, int64_t heads, float* acc);
  // dst[r·C + c] = g[c]·x[r·C + c]: every token scaled channel-wise by the pooled vector.
  void (*scale_rows)(const float* x, int64_t rows, int64_t c, const float* g, float* dst);
};

const FastformerSimd* fastformer_simd_avx512();
const FastformerSimd* fastformer_simd_avx2();

}  // namespace x86
}  // namespace vitrt
