// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cpu/x86/newton_iterate.h"

#include "backends/cpu/x86/aligned_buffer.h"

namespace vitrt {
namespace x86 {
namespace {

struct Work {
  float *packed_p, *packed_v, *vp, *vpv;
};

Work work_of(const GemmKernels* g, int64_t m, int64_t mp, float* base) {
  const int64_t packed = round16(gemm_packed_floats(m, m, g->nr));
  Work w;
  w.packed_p = base;
  w.packed_v = base + packed;
  w.vp = base + 2 * packed;
  w.vpv = w.vp + round16(m * mp);
  return w;
}

}  // namespace

int64_t newton_work_floats(const GemmKernels* g, int64_t m, int64_t mp) {
  return 2 * round16(gemm_packed_floats(m, m, g->nr)) + 2 * round16(m * mp);
}

void newton_iterate(const GemmKernels* g, const float* p, int64_t m, int64_t mp, int32_t iterations, float* v,
                    float* work) {
  const Work w = work_of(g, m, mp, work);
  gemm_pack_rows(p, mp, m, m, g->nr, w.packed_p);
  for (int32_t it = 0; it < iterations; ++it) {
    gemm_packed_product(g, v, mp, m, m, w.packed_p, m, w.vp, mp);  // V·P
    gemm_pack_rows(v, mp, m, m, g->nr, w.packed_v);
    gemm_packed_product(g, w.vp, mp, m, m, w.packed_v, m, w.vpv, mp);  // (V·P)·V
    // 2·v is exact, so 2·v − vpv rounds once, as the reference's 2·V − (V·P)·V.
    for (int64_t i = 0; i < m; ++i) {
      float* row = v + i * mp;
      const float* x = w.vpv + i * mp;
      for (int64_t j = 0; j < m; ++j) row[j] = 2.0f * row[j] - x[j];
    }
  }
}

}  // namespace x86
}  // namespace vitrt
