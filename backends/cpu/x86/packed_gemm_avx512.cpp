// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The packed GEMM's AVX-512 tiles (6 × 64, 8 × 48 and 14 × 32); built with -mavx512*, only called when CPUID
// has them. Their erf GELU epilogue is the table one (gelu_table_avx512.h: within 9e-8·|x| of the exact GELU,
// closer than the float formula PyTorch computes, in about half of gelu_vec::gelu_erf's instructions).
#include "backends/cpu/x86/gelu_table_avx512.h"
#include "backends/cpu/x86/packed_gemm_impl.h"
#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {
namespace {

template <int Rows, int Vecs>
struct Vec512 : Avx512TableGeluOps {
  static constexpr int kRows = Rows, kVecs = Vecs;
  // B read in place (GemmPanel::ldb) is not 64-byte aligned; on aligned panels an unaligned load costs the
  // same.
  static V load(const float* p) { return _mm512_loadu_ps(p); }
};

}  // namespace

const GemmKernels* gemm_kernels_avx512(int which) {
  static const GemmKernels k[] = {
      {"avx512 8x48", 8, 48, &gemm_impl::panel<Vec512<8, 3>>},
      {"avx512 14x32", 14, 32, &gemm_impl::panel<Vec512<14, 2>>},
      {"avx512 6x64", 6, 64, &gemm_impl::panel<Vec512<6, 4>>},
  };
  return &k[which < 0 || which > 2 ? 0 : which];
}

}  // namespace x86
}  // namespace vitrt
