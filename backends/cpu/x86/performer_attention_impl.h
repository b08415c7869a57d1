// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// PerformerAttention's element loops (performer_attention_simd.h), written once on xsimd batches and
// instantiated per ISA (performer_attention_avx512.cpp, performer_attention_avx2.cpp). Everything lives in an
// anonymous namespace so that no inline function compiled with AVX-512 flags can be merged by the linker into
// the baseline or AVX2 code. A row's last partial vector is loaded into a register padded with a neutral
// value and only its valid lanes are stored.
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/performer_attention_simd.h"
#include "backends/cpu/x86/vec_fma.h"
#include "backends/cpu/x86/xsimd_partial.h"

// GCC 12 reports the deliberately undefined source operand of its own AVX-512 intrinsics (`__m512 __Y =
// __Y;`, reached through xsimd::exp) as uninitialised once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace vitrt {
namespace x86 {
namespace {

template <class A>
using PfVec = xsimd::batch<float, A>;

// fn(vector) -> vector over u[0, n) in place.
template <class A, class Fn>
inline void pf_map(float* u, int64_t n, const Fn& fn) {
  using B = PfVec<A>;
  constexpr int64_t W = B::size;
  int64_t j = 0;
  for (; j + W <= n; j += W) fn(B::load_unaligned(u + j)).store_unaligned(u + j);
  if (j < n) partial_store<A>(fn(partial_load<A>(u + j, n - j, 0.0f)), u + j, n - j);
}

template <class A>
void pf_scale_rows(const float* src, int64_t lds, int64_t rows, int64_t d, float dn, float* dst,
                   float* sum_sq) {
  using B = PfVec<A>;
  constexpr int64_t W = B::size;
  const B scale(dn);
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * lds;
    float* o = dst + r * d;
    B sq(0.0f);
    int64_t t = 0;
    for (; t + W <= d; t += W) {
      const B x = B::load_unaligned(s + t);
      (scale * x).store_unaligned(o + t);
      sq = vec_fma(x, x, sq);
    }
    if (t < d) {
      const B x = partial_load<A>(s + t, d - t, 0.0f);
      partial_store<A>(scale * x, o + t, d - t);
      sq = vec_fma(x, x, sq);
    }
    sum_sq[r] = xsimd::hadd(sq);
  }
}

template <class A>
void pf_softmax_features(float* u, int64_t n, float g, float max, const ref::PerformerScalars& s) {
  using B = PfVec<A>;
  const B gv(g), mv(max), eps(ref::kPerformerSoftmaxEps), ratio(s.ratio);
  pf_map<A>(u, n, [&](const B& x) { return ratio * (xsimd::exp((x - gv) - mv) + eps); });
}

template <class A>
void pf_relu_features(float* u, int64_t n) {
  using B = PfVec<A>;
  const B zero(0.0f), eps(ref::kPerformerGeneralizedEps);
  // select keeps NaN (x < 0 is false), as torch.relu does.
  pf_map<A>(u, n, [&](const B& x) { return xsimd::select(x < zero, zero, x) + eps; });
}

template <class A>
void pf_add_row(const float* row, int64_t n, float* acc) {
  using B = PfVec<A>;
  constexpr int64_t W = B::size;
  int64_t j = 0;
  for (; j + W <= n; j += W)
    (B::load_unaligned(acc + j) + B::load_unaligned(row + j)).store_unaligned(acc + j);
  for (; j < n; ++j) acc[j] += row[j];
}

template <class A>
float pf_dot(const float* a, const float* b, int64_t n) {
  using B = PfVec<A>;
  constexpr int64_t W = B::size;
  B acc(0.0f);
  int64_t j = 0;
  for (; j + W <= n; j += W) acc = vec_fma(B::load_unaligned(a + j), B::load_unaligned(b + j), acc);
  if (j < n) acc = vec_fma(partial_load<A>(a + j, n - j, 0.0f), partial_load<A>(b + j, n - j, 0.0f), acc);
  return xsimd::hadd(acc);
}

template <class A>
PerformerSimd make_performer_simd(const char* name) {
  PerformerSimd t;
  t.name = name;
  t.scale_rows = &pf_scale_rows<A>;
  t.row_max = &partial_row_max<A>;
  t.softmax_features = &pf_softmax_features<A>;
  t.relu_features = &pf_relu_features<A>;
  t.add_row = &pf_add_row<A>;
  t.dot = &pf_dot<A>;
  return t;
}

}  // namespace
}  // namespace x86
}  // namespace vitrt

#pragma GCC diagnostic pop
