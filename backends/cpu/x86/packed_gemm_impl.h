// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The packed GEMM's register tiles, written once over an ISA's vector type (Vec512 / Vec256 below) and
// compiled in packed_gemm_avx512.cpp and packed_gemm_avx2.cpp with their own -m flags.
#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include "backends/cpu/x86/fma_tile.h"
#include "backends/cpu/x86/gelu_vec_impl.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/swish_vec_impl.h"

namespace vitrt {
namespace x86 {
namespace gemm_impl {

// K is cut into equal blocks of at most kGemmMaxBlockK rows (gemm_k_block): one block of the panel (at most
// 192 × 64 × 4 = 48 KB) stays in L1/L2 while the row tiles pass, and C is loaded and stored once per block.

template <class T, int R, int NV>
inline void activate(GemmAct act, typename T::V (&acc)[R][NV]) {
  if (act == GemmAct::kRelu) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = T::max(acc[r][v], T::zero());
  } else if (act == GemmAct::kGeluErf) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = gelu_vec::erf_gelu_of<T>(acc[r][v]);
  } else if (act == GemmAct::kGeluTanh) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = gelu_vec::gelu_tanh<T>(acc[r][v]);
  } else if (act == GemmAct::kSilu) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = swish_vec::silu<T>(acc[r][v]);
  } else if (act == GemmAct::kHardSwish) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = swish_vec::hard_swish<T>(acc[r][v]);
  } else if (act == GemmAct::kRelu6) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = swish_vec::relu6<T>(acc[r][v]);
  }
}

// acc += the residual's R × NV block at row0 (masked past the panel's columns: valid[v] floats of vector v).
template <class T, int R, int NV>
inline void add_residual(const GemmPanel& p, int64_t row0, bool partial, const int (&valid)[NV],
                         typename T::V (&acc)[R][NV]) {
  constexpr int W = T::kWidth;
  const float* res = p.residual + row0 * p.ldr;
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = T::add(acc[r][v], partial ? T::loadn(res + r * p.ldr + v * W, valid[v])
                                            : T::loadu(res + r * p.ldr + v * W));
}

// Asks for the residual's R × NV block at row0 before the tile's FMAs run, so it is in cache when the
// epilogue adds it. Its rows lie a whole channel plane apart in a conv (ldr = pixels), too many streams for
// the hardware prefetchers: without this each line was a demand miss inside the tile, and a ResNet-50 conv
// with its residual fused ran slower than the conv, Add and Relu apart. A prefetch never faults, so the
// columns past a partial panel's end need no mask.
template <class T, int R, int NV>
inline void prefetch_residual(const GemmPanel& p, int64_t row0) {
  constexpr int kLineFloats = 16;
  const float* res = p.residual + row0 * p.ldr;
  for (int r = 0; r < R; ++r)
    for (int f = 0; f < NV * T::kWidth; f += kLineFloats) __builtin_prefetch(res + r * p.ldr + f);
}

// The inner product's ops: T's own fp32 FMAs, or T::ProductOps where the panels hold other element types
// (bf16 pairs: packed_gemm_bf16.h). The epilogue always uses T's.
template <class T, class = void>
struct ProductOps {
  using type = T;
};
template <class T>
struct ProductOps<T, std::void_t<typename T::ProductOps>> {
  using type = typename T::ProductOps;
};

// An ISA's tile: NR = NV vectors, MR rows, so MR × NV accumulators plus NV B vectors and a broadcast fit the
// register file.
template <class T, int R>
inline void tile(const GemmPanel& p, int64_t row0, int64_t k0, int64_t kc, bool first, bool last) {
  using V = typename T::V;
  constexpr int W = T::kWidth, NV = T::kVecs, NR = NV * W;
  // Floats of each vector inside the panel's columns: W, except in the last panel of a matrix whose width is
  // not a multiple of NR, where loads and stores are masked (the packed B is zero there, so the accumulators
  // past the edge hold zeros and are never stored).
  int valid[NV];
  for (int v = 0; v < NV; ++v) valid[v] = static_cast<int>(std::clamp<int64_t>(p.cols - v * W, 0, W));
  const bool partial = p.cols < NR;
  float* c = p.c + row0 * p.ldc;
  const int64_t ldc = p.ldc;
  V acc[R][NV];
  if (first) {
    V bc[NV];
    for (int v = 0; v < NV; ++v) bc[v] = p.bias_cols ? T::load(p.bias_cols + v * W) : T::zero();
    for (int r = 0; r < R; ++r) {
      const V br = p.bias_rows ? T::set1(p.bias_rows[row0 + r]) : T::zero();
      for (int v = 0; v < NV; ++v) acc[r][v] = T::add(bc[v], br);
    }
  } else if (!partial) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = T::loadu(c + r * ldc + v * W);
  } else {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) acc[r][v] = T::loadn(c + r * ldc + v * W, valid[v]);
  }
  if (last && p.residual) prefetch_residual<T, R, NV>(p, row0);
  using P = typename ProductOps<T>::type;
  const int64_t ldb = p.ldb > 0 ? p.ldb : NR;
  constexpr bool kFp32 = std::is_same_v<P, T>;
  if (kFp32 && p.a_offsets) {  // the implicit conv product: row0 starts a tile inside one output row
    if constexpr (kFp32) {
      const float* a = p.a + row0 / p.a_row_width * p.a_row_stride + row0 % p.a_row_width * p.lda;
      fma_tile_offsets<P, R, NV>(acc, a, p.lda, p.a_offsets + k0, p.b + k0 * ldb, ldb, kc);
    }
  } else if (p.a_packed)  // this K block's row tile of T::kRows rows (gemm_pack_a): R <= kRows of them are
                          // read
    fma_tile<P, R, NV>(acc, p.a + k0 * p.a_rows + (p.a_row0 + row0) * kc, 1, T::kRows, p.b + k0 * ldb, ldb,
                       kc);
  else if (p.a_step > 1)
    fma_tile<P, R, NV>(acc, p.a + row0 * p.lda + k0 * p.a_step, p.lda, p.a_step, p.b + k0 * ldb, ldb, kc);
  else
    fma_tile<P, R, NV>(acc, p.a + row0 * p.lda + k0, p.lda, 1, p.b + k0 * ldb, ldb, kc);
  if (last && p.residual && p.residual_before_act) add_residual<T, R, NV>(p, row0, partial, valid, acc);
  if (last && p.act != GemmAct::kNone) activate<T, R, NV>(p.act, acc);
  if (last && p.residual && !p.residual_before_act) add_residual<T, R, NV>(p, row0, partial, valid, acc);
  if (partial) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) T::storen(c + r * ldc + v * W, acc[r][v], valid[v]);
    return;
  }
  const bool stream = last && p.stream && (reinterpret_cast<uintptr_t>(c) | (ldc * 4)) % 64 == 0;
  if (stream) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) T::stream(c + r * ldc + v * W, acc[r][v]);
  } else {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) T::storeu(c + r * ldc + v * W, acc[r][v]);
  }
}

// rows in [1, R]: the tile of exactly that many rows.
template <class T, int R>
inline void tile_rows(int64_t rows, const GemmPanel& p, int64_t row0, int64_t k0, int64_t kc, bool first,
                      bool last) {
  if constexpr (R > 1) {
    if (rows < R) return tile_rows<T, R - 1>(rows, p, row0, k0, kc, first, last);
  }
  tile<T, R>(p, row0, k0, kc, first, last);
}

// Walks the lines of a panel's GemmPrefetch boxes, a few at a time.
class Prefetcher {
 public:
  explicit Prefetcher(const GemmPanel& p) : p_(p) {
    for (int i = 0; i < p.prefetches; ++i) lines_ += p.prefetch[i].rows * (p.prefetch[i].floats / 16 + 2);
    if (p.prefetches > 0) start_row();
  }
  int64_t lines() const { return lines_; }
  // Prefetches up to n more lines into L2 (a prefetch never faults).
  void issue(int64_t n) {
    for (; n > 0 && box_ < p_.prefetches; --n) {
      _mm_prefetch(at_, _MM_HINT_T1);
      at_ += 64;
      if (at_ < end_) continue;
      if (++row_ >= p_.prefetch[box_].rows) row_ = 0, ++box_;
      if (box_ < p_.prefetches) start_row();
    }
  }

 private:
  void start_row() {
    const GemmPrefetch& b = p_.prefetch[box_];
    const float* lo = b.base + row_ * b.stride;
    at_ = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(lo) & ~uintptr_t{63});
    end_ = reinterpret_cast<const char*>(lo + b.floats);
  }

  const GemmPanel& p_;
  int64_t lines_ = 0, row_ = 0;
  int box_ = 0;
  const char *at_ = nullptr, *end_ = nullptr;
};

// T's tile with Vecs < T::kVecs vectors per row and the same rows: what a last panel narrower than NR runs,
// so that vectors wholly past its columns are not computed (196 pixels of a 14² map on 32-wide panels: the
// 7th panel's 4 columns in one vector instead of two). It reads the panel's rows at their full width (ldb).
template <class T, int Vecs>
struct Narrow : T {
  static constexpr int kVecs = Vecs;
};

template <class T>
void panel(const GemmPanel& p) {
  constexpr int W = T::kWidth, NV = T::kVecs;
  if constexpr (NV > 1 && std::is_same_v<typename ProductOps<T>::type, T>) {  // fp32 panels only
    if (p.cols <= (NV - 1) * W) {
      GemmPanel narrow = p;
      if (narrow.ldb <= 0) narrow.ldb = NV * W;
      return panel<Narrow<T, NV - 1>>(narrow);
    }
  }
  struct Fence {  // non-temporal stores must be ordered before other threads read C
    bool on;
    ~Fence() {
      if (on) _mm_sfence();
    }
  } fence{p.stream};
  constexpr int MR = T::kRows;
  if (p.k == 0) {  // C = bias only
    for (int64_t k0 = 0; k0 < 1; ++k0)
      for (int64_t i = 0; i < p.m; i += MR)
        tile_rows<T, MR>(std::min<int64_t>(MR, p.m - i), p, i, 0, 0, true, true);
    return;
  }
  if (p.m <= 0) return;  // no rows: nothing to store (and no tiles to spread the prefetches over)
  const int64_t block = gemm_k_block(p.k);
  Prefetcher prefetcher(p);
  // The prefetches spread evenly over the register tiles, a share before each.
  const int64_t row_tiles = p.a_offsets && p.a_row_width > 0
                                ? p.m / p.a_row_width * ((p.a_row_width + MR - 1) / MR)
                                : (p.m + MR - 1) / MR;
  const int64_t tiles = (p.k + block - 1) / block * row_tiles;
  const int64_t per_tile = (prefetcher.lines() + tiles - 1) / tiles;
  const bool even = p.even_rows && !p.a_packed;
  // The implicit conv product: each output row (a_row_width rows of the panel) cut into near-equal tiles.
  const int64_t width = p.a_offsets ? p.a_row_width : 0;
  const int64_t width_tiles = width > 0 ? (width + MR - 1) / MR : 0;
  for (int64_t k0 = 0; k0 < p.k; k0 += block) {
    const int64_t kc = std::min(block, p.k - k0);
    const bool first = k0 == 0, last = k0 + kc == p.k;
    if (width > 0) {
      for (int64_t y0 = 0; y0 < p.m; y0 += width)
        for (int64_t t = 0; t < width_tiles; ++t) {
          const int64_t i = t * width / width_tiles, rows = (t + 1) * width / width_tiles - i;
          prefetcher.issue(per_tile);
          tile_rows<T, MR>(rows, p, y0 + i, k0, kc, first, last);
        }
      continue;
    }
    for (int64_t t = 0; t < row_tiles; ++t) {
      const int64_t i = even ? t * p.m / row_tiles : t * MR;
      const int64_t rows = even ? (t + 1) * p.m / row_tiles - i : std::min<int64_t>(MR, p.m - i);
      prefetcher.issue(per_tile);
      tile_rows<T, MR>(rows, p, i, k0, kc, first, last);
    }
  }
}

}  // namespace gemm_impl
}  // namespace x86
}  // namespace vitrt
