// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The broadcast FMA register tile, written once for every x86 inner loop that multiplies rows of A by a
// row-major B: the packed GEMM (packed_gemm_impl.h), the attention loops (flash_attention_impl.h,
// lavit_attention_impl.h) and LinearAttention's products (linear_attention_impl.h). R rows × NV vectors of
// accumulators,
//   acc[r][v] = fma(a[r·ars + t·acs], b[t·ldb + v·W .. +W), acc[r][v])   for t = 0, 1, …, k−1 in order,
// so each element is summed in the reference kernel's order with one FMA per term. Ops supplies the vector
// type V, its width kWidth and load (of B), set1 and fma: the packed GEMM's own Avx512Ops / Avx2Ops
// (unaligned loads: a panel is packed, or a pointwise conv's input read in place), or XsimdOps<A> below
// (unaligned loads) for the xsimd kernels.
//
// Everything is in an anonymous namespace, like the *_impl.h files including it: each ISA's translation unit,
// built with its own -m flags, gets its own copy, which the linker can never merge into another's.
#include <cstdint>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/vec_fma.h"

namespace vitrt {
namespace x86 {
namespace {

template <class Ops, int R, int NV>
__attribute__((always_inline)) inline void fma_tile(typename Ops::V (&acc)[R][NV], const float* a,
                                                    int64_t ars, int64_t acs, const float* b, int64_t ldb,
                                                    int64_t k) {
  using V = typename Ops::V;
  constexpr int W = Ops::kWidth;
  for (int64_t t = 0; t < k; ++t) {
    V bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = Ops::load(b + t * ldb + v * W);
    for (int r = 0; r < R; ++r) {
      const V av = Ops::set1(a[r * ars + t * acs]);
      for (int v = 0; v < NV; ++v) acc[r][v] = Ops::fma(av, bv[v], acc[r][v]);
    }
  }
}

// fma_tile with A[r, t] = a[r·ars + offsets[t]]: Conv2d's implicit product, each tap's rows read straight
// from the (padded) input at the tap's offset (GemmPanel::a_offsets). The same FMAs in the same order.
template <class Ops, int R, int NV>
__attribute__((always_inline)) inline void fma_tile_offsets(typename Ops::V (&acc)[R][NV], const float* a,
                                                            int64_t ars, const int32_t* offsets,
                                                            const float* b, int64_t ldb, int64_t k) {
  using V = typename Ops::V;
  constexpr int W = Ops::kWidth;
  for (int64_t t = 0; t < k; ++t) {
    const float* at = a + offsets[t];
    V bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = Ops::load(b + t * ldb + v * W);
    for (int r = 0; r < R; ++r) {
      const V av = Ops::set1(at[r * ars]);
      for (int v = 0; v < NV; ++v) acc[r][v] = Ops::fma(av, bv[v], acc[r][v]);
    }
  }
}

// fma_tile's Ops over an xsimd architecture A.
template <class A>
struct XsimdOps {
  using V = xsimd::batch<float, A>;
  static constexpr int kWidth = static_cast<int>(V::size);
  static V load(const float* p) { return V::load_unaligned(p); }
  static V set1(float x) { return V(x); }
  static V fma(const V& a, const V& b, const V& c) { return vec_fma(a, b, c); }
};

}  // namespace
}  // namespace x86
}  // namespace vitrt
