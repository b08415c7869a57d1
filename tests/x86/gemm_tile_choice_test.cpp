// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The packed GEMM's tile choice (packed_gemm.cpp's gemm_kernels_choose), both rules on any CPU: where 512-bit
// FMAs run as two halves (Zen 4, split) the fp32 panels' columns are counted as the tiles compute them, whole
// vectors, since a last panel narrower than the tile runs on fewer vectors: N = 96 takes 6 × 64 (64 + 32
// columns) for fp32, and 8 × 48 (no padding) for the bf16 panels, which are computed whole. Without split
// both counts are whole panels, so fp32 and bf16 choose alike on every shape. gemm_kernels_for applies the
// rule of this CPU.
#include <doctest/doctest.h>

#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace test {
namespace {

const x86::GemmKernels* choose(int64_t m, int64_t n, int64_t k, bool narrows, bool split) {
  return x86::gemm_kernels_choose(true, m, n, k, -1, narrows, split);
}

TEST_CASE("x86 GEMM tile choice: fp32 panels counted in whole vectors when split, whole panels otherwise") {
  const x86::GemmKernels* t8x48 = x86::gemm_kernels_avx512(0);
  const x86::GemmKernels* t14x32 = x86::gemm_kernels_avx512(1);
  const x86::GemmKernels* t6x64 = x86::gemm_kernels_avx512(2);
  // The forced tile and the AVX2 path win over any count.
  CHECK(x86::gemm_kernels_choose(true, 3136, 96, 96, 1, true, true) == t14x32);
  CHECK(x86::gemm_kernels_choose(false, 3136, 96, 96, -1, true, true) == x86::gemm_kernels_avx2());

  // Split (Zen 4).
  CHECK(choose(3136, 96, 96, true, true) == t6x64);  // Swin-T's stage-1 proj
  CHECK(choose(3136, 96, 384, true, true) == t6x64);
  CHECK(choose(3136, 96, 96, false, true) == t8x48);  // bf16: 128 columns against 96 (x 1.15)
  CHECK(choose(197, 576, 192, true, true) == t6x64);  // no padding either way
  CHECK(choose(8, 64, 64, true, true) == t8x48);      // rows: 12 against 8 (x 1.15)

  // Not split: the least padding in whole panels, for fp32 and bf16 alike.
  CHECK(choose(3136, 96, 96, true, false) == t8x48);
  CHECK(choose(197, 576, 192, true, false) == t6x64);
  CHECK(choose(14, 32, 100, true, false) == t14x32);
  int differ = 0;
  for (int64_t m : {1, 7, 8, 13, 14, 49, 196, 197, 3136})
    for (int64_t n : {16, 24, 48, 64, 96, 100, 192, 288, 1000})
      for (int64_t k : {64, 96, 1024})
        if (choose(m, n, k, true, false) != choose(m, n, k, false, false)) ++differ;
  CHECK(differ == 0);

  // This CPU's rule.
  const bool split = x86_avx512_is_split();
  CHECK(x86::gemm_kernels_for(true, 3136, 96, 96) == choose(3136, 96, 96, true, split));
}

}  // namespace
}  // namespace test
}  // namespace vitrt
