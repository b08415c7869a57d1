// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The packed GEMM's AVX2 tiles (6 rows × 16 columns), their erf-GELU epilogue the table GELU
// (gelu_table_avx2.h); built with -mavx2 -mfma.
#include "backends/cpu/x86/gelu_table_avx2.h"
#include "backends/cpu/x86/packed_gemm_impl.h"
#include "backends/cpu/x86/vec_avx2.h"

namespace vitrt {
namespace x86 {
namespace {

struct Vec256 : Avx2TableGeluOps {
  static constexpr int kRows = 6, kVecs = 2;
  // B read in place (GemmPanel::ldb) is not 32-byte aligned; on aligned panels an unaligned load costs the
  // same.
  static V load(const float* p) { return _mm256_loadu_ps(p); }
};

}  // namespace

const GemmKernels* gemm_kernels_avx2() {
  static const GemmKernels k = {"avx2 6x16", Vec256::kRows, Vec256::kVecs * Vec256::kWidth,
                                &gemm_impl::panel<Vec256>};
  return &k;
}

}  // namespace x86
}  // namespace vitrt
