// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cpu/x86/packed_gemm.h"

namespace vitrt {
namespace x86 {

void gemm_pack_transposed(const float* w, int64_t n, int64_t k, int nr, float* dst) {
  for (int64_t p = 0; p < gemm_panels(n, nr); ++p) {
    float* panel = dst + p * k * nr;
    for (int64_t j = 0; j < nr; ++j) {
      const int64_t col = p * nr + j;
      if (col >= n) {
        for (int64_t t = 0; t < k; ++t) panel[t * nr + j] = 0.0f;
        continue;
      }
      const float* src = w + col * k;
      for (int64_t t = 0; t < k; ++t) panel[t * nr + j] = src[t];
    }
  }
}

}  // namespace x86
}  // namespace vitrt
