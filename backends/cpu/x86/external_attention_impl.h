// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// ExternalAttention's column loops (external_attention_simd.h), written once on xsimd batches and
// instantiated per ISA. Everything lives in an anonymous namespace so that no inline function compiled with
// AVX-512 flags can be merged by the linker into the baseline or AVX2 code.
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/external_attention_simd.h"

// GCC 12 reports the deliberately undefined source operand of its own AVX-512 intrinsics (reached through
// xsimd::exp) as uninitialised once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace vitrt {
namespace x86 {
namespace {

template <class A>
void ea_column_max(const float* l, int64_t rows, int64_t ld, int64_t cols, float* mx) {
  using B = xsimd::batch<float, A>;
  for (int64_t j = 0; j < cols; j += B::size) {
    B m = B::load_unaligned(l + j);
    for (int64_t i = 1; i < rows; ++i) m = xsimd::max(m, B::load_unaligned(l + i * ld + j));
    m.store_unaligned(mx + j);
  }
}

template <class A>
void ea_exp_columns(float* l, int64_t rows, int64_t ld, int64_t cols, const float* m, float* sum) {
  using B = xsimd::batch<float, A>;
  for (int64_t j = 0; j < cols; j += B::size) {
    const B mj = B::load_unaligned(m + j);
    B acc(0.0f);
    for (int64_t i = 0; i < rows; ++i) {
      const B e = xsimd::exp(B::load_unaligned(l + i * ld + j) - mj);
      e.store_unaligned(l + i * ld + j);
      acc += e;
    }
    acc.store_unaligned(sum + j);
  }
}

template <class A>
ExternalAttentionSimd make_external_attention_simd(const char* name) {
  return ExternalAttentionSimd{name, static_cast<int>(xsimd::batch<float, A>::size), &ea_column_max<A>,
                               &ea_exp_columns<A>};
}

}  // namespace
}  // namespace x86
}  // namespace vitrt

#pragma GCC diagnostic pop
