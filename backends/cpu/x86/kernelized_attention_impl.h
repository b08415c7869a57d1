// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// KernelizedAttention's element loops (kernelized_attention_simd.h), written once on xsimd batches and
// instantiated per ISA (kernelized_attention_avx512.cpp, kernelized_attention_avx2.cpp). Everything lives in
// an anonymous namespace so that no inline function compiled with AVX-512 flags can be merged by the linker
// into the baseline or AVX2 code. A row's last partial vector is loaded into a register padded with zeros and
// only its valid lanes are stored.
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/kernelized_attention_simd.h"
#include "backends/cpu/x86/vec_fma.h"
#include "backends/cpu/x86/xsimd_partial.h"

// GCC 12 reports the deliberately undefined source operand of its own AVX-512 intrinsics (reached through
// xsimd::expm1) as uninitialised once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace vitrt {
namespace x86 {
namespace {

template <class A>
using KaVec = xsimd::batch<float, A>;

template <class A>
void ka_elu_rows(const float* src, int64_t lds, int64_t rows, int64_t n, float scale, float* dst,
                 int64_t ldd) {
  using B = KaVec<A>;
  constexpr int64_t W = B::size;
  const B zero(0.0f), one(1.0f), sv(scale);
  const bool divide = scale != 1.0f;
  // NaN stays NaN: x > 0 is false and expm1(NaN) is NaN, as in ref::elu_feature.
  auto phi = [&](const B& x) {
    const B e = xsimd::select(x > zero, x, xsimd::expm1(x)) + one;
    return divide ? e / sv : e;
  };
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * lds;
    float* o = dst + r * ldd;
    int64_t j = 0;
    for (; j + W <= n; j += W) phi(B::load_unaligned(s + j)).store_unaligned(o + j);
    if (j < n) partial_store<A>(phi(partial_load<A>(s + j, n - j)), o + j, n - j);
  }
}

template <class A>
float ka_sum(const float* x, int64_t n) {
  using B = KaVec<A>;
  constexpr int64_t W = B::size;
  B acc(0.0f);
  int64_t j = 0;
  for (; j + W <= n; j += W) acc += B::load_unaligned(x + j);
  if (j < n) acc += partial_load<A>(x + j, n - j);
  return xsimd::hadd(acc);
}

template <class A>
float ka_dot(const float* a, const float* b, int64_t n) {
  using B = KaVec<A>;
  constexpr int64_t W = B::size;
  B acc(0.0f);
  int64_t j = 0;
  for (; j + W <= n; j += W) acc = vec_fma(B::load_unaligned(a + j), B::load_unaligned(b + j), acc);
  if (j < n) acc = vec_fma(partial_load<A>(a + j, n - j), partial_load<A>(b + j, n - j), acc);
  return xsimd::hadd(acc);
}

template <class A>
void ka_scale_rows(float* x, int64_t ldx, int64_t rows, int64_t n, const float* s) {
  using B = KaVec<A>;
  constexpr int64_t W = B::size;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * ldx;
    const B f(s[r]);
    int64_t j = 0;
    for (; j + W <= n; j += W) (B::load_unaligned(row + j) * f).store_unaligned(row + j);
    for (; j < n; ++j) row[j] *= s[r];
  }
}

template <class A>
KernelizedSimd make_kernelized_simd(const char* name) {
  KernelizedSimd t;
  t.name = name;
  t.elu_rows = &ka_elu_rows<A>;
  t.sum = &ka_sum<A>;
  t.dot = &ka_dot<A>;
  t.scale_rows = &ka_scale_rows<A>;
  return t;
}

}  // namespace
}  // namespace x86
}  // namespace vitrt

#pragma GCC diagnostic pop
