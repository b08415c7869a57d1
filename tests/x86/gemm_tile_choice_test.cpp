// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// gemm_kernels_for's tile choice (packed_gemm.cpp). On Zen 4 (x86_avx512_is_split) the fp32 panels' columns
// are counted as the tiles compute them, whole vectors, since a last panel narrower than the tile runs on
// fewer vectors: N = 96 takes 6 × 64 (64 + 32 columns) for fp32, and 8 × 48 (no padding) for the bf16 panels,
// which are computed whole. Elsewhere both counts are whole panels, so fp32 and bf16 choose alike on every
// shape. Skipped, saying so, without AVX-512.
#include <doctest/doctest.h>

#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace test {
namespace {

TEST_CASE("x86 GEMM tile choice: fp32 panels counted in whole vectors on Zen 4, whole panels elsewhere") {
  if (x86_detect_isa() < X86Isa::kAvx512) {
    MESSAGE("tile choice skipped: this CPU has no AVX-512");
    return;
  }
  const x86::GemmKernels* t8x48 = x86::gemm_kernels_avx512(0);
  const x86::GemmKernels* t6x64 = x86::gemm_kernels_avx512(2);
  // The forced tile wins over any count.
  CHECK(x86::gemm_kernels_for(true, 3136, 96, 96, 1) == x86::gemm_kernels_avx512(1));
  CHECK(x86::gemm_kernels_for(false, 3136, 96, 96) == x86::gemm_kernels_avx2());
  if (x86_avx512_is_split()) {
    MESSAGE("Zen 4: 512-bit FMAs in two halves");
    CHECK(x86::gemm_kernels_for(true, 3136, 96, 96) == t6x64);  // Swin-T's stage-1 proj
    CHECK(x86::gemm_kernels_for(true, 3136, 96, 384) == t6x64);
    CHECK(x86::gemm_kernels_choose(true, 3136, 96, 96, -1, false) == t8x48);
    CHECK(x86::gemm_kernels_for(true, 197, 576, 192) == t6x64);  // no padding either way
    CHECK(x86::gemm_kernels_for(true, 8, 64, 64) == t8x48);      // rows: 12 against 8 (x 1.15)
  } else {
    int differ = 0;
    for (int64_t m : {1, 7, 8, 13, 14, 49, 196, 197, 3136})
      for (int64_t n : {16, 24, 48, 64, 96, 100, 192, 288, 1000})
        for (int64_t k : {64, 96, 1024})
          if (x86::gemm_kernels_for(true, m, n, k) != x86::gemm_kernels_choose(true, m, n, k, -1, false))
            ++differ;
    CHECK(differ == 0);
  }
}

}  // namespace
}  // namespace test
}  // namespace vitrt
