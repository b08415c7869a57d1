// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The bf16 packed GEMM on AMX tiles (docs/architecture.md §7.1), written once over a Tiles policy: the
// hardware's tile instructions (packed_gemm_amx.cpp) or a plain C++ model of them (packed_gemm_amx_model.h),
// which lets the tests run this kernel's layout and tail logic on CPUs without AMX.
//
// The operands are the AVX512-BF16 kernel's (packed_gemm_bf16.h), unchanged: A as rows of K pairs (lda pairs
// apart), B as column panels of NR = 32 pairs a row. An AMX B tile is 16 rows of 16 pairs (64 bytes), row t
// holding pair t of K for 16 columns: exactly 16 rows of a panel, 16 columns at a time, read with the panel's
// row stride (128 bytes). An A tile is 16 rows of A × 16 pairs. Per 32 × 32 block of C: two A tiles, two B
// tiles and four C tiles (tiles 0-3: C, 4-5: A, 6-7: B), all configured as 16 rows × 64 bytes; K is summed
// into the C tiles 16 pairs at a time, rows past M and pairs past K come from zeroed staging copies (a tile
// load reads all 16 rows and 64 bytes of each). The C block is then stored to the stack and the fp32
// epilogue (bias, activation, residual) applied with AVX-512 vectors as it is written out.
//
// GemmPanel forms this kernel does not implement (a packed A, a_step, implicit offsets, B read in place,
// prefetches, K = 0, per-row bias, the residual added before the activation: the fp32 NCHW conv's forms, not
// the bf16 callers') run on the AVX512-BF16 14 × 32 tile, whose panels have the same layout.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "backends/cpu/x86/gelu_table_avx512.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/packed_gemm_impl.h"
#include "backends/cpu/x86/vec_avx512.h"

namespace vitrt {
namespace x86 {
namespace {

namespace amx {

constexpr int kTileRows = 16;   // rows of every tile
constexpr int kTilePairs = 16;  // 64 bytes a row: 16 pairs of A or B, 16 floats of C
constexpr int kMr = 32, kNr = 32;

// The tile configuration (palette 1) the kernel uses: tiles 0-7, 16 rows of 64 bytes each.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64, "the tile configuration is 64 bytes");

inline TileConfig kernel_config() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) {
    c.colsb[t] = 4 * kTilePairs;
    c.rows[t] = kTileRows;
  }
  return c;
}

// Whether the kernel runs this panel itself (else the AVX512-BF16 tile does).
inline bool handles(const GemmPanel& p) {
  return !p.a_packed && p.a_step <= 1 && !p.a_offsets && p.ldb <= 0 && p.prefetches == 0 && p.k > 0 &&
         p.lda >= p.k && !p.bias_rows && !p.residual_before_act;
}

// The staging copies are inline vector moves, never memcpy / memset calls: the C tiles hold their sums
// across them, and the AMX ABI makes the tile registers volatile across calls (a memcpy a sanitizer or
// profiler interposes need not preserve them).

// Rows [row0, row0 + rows) of A, pairs [k0, k0 + pairs), copied into a 16 × 16-pair staging tile, zero
// elsewhere (rows past M, pairs past K).
inline void stage_a(const GemmPanel& p, int64_t row0, int64_t rows, int64_t k0, int64_t pairs, float* dst) {
  const __mmask16 valid = Avx512Ops::mask(static_cast<int>(pairs));
  for (int64_t r = 0; r < kTileRows; ++r)
    _mm512_store_ps(dst + r * kTilePairs, r < rows
                                              ? _mm512_maskz_loadu_ps(valid, p.a + (row0 + r) * p.lda + k0)
                                              : _mm512_setzero_ps());
}

// Pair rows [k0, k0 + pairs) of the B panel (kNr pairs a row), zero past K, into a 16 × kNr staging block.
inline void stage_b(const GemmPanel& p, int64_t k0, int64_t pairs, float* dst) {
  for (int64_t r = 0; r < kTileRows; ++r)
    for (int v = 0; v < kNr / kTilePairs; ++v)
      _mm512_store_ps(
          dst + r * kNr + v * kTilePairs,
          r < pairs ? _mm512_loadu_ps(p.b + (k0 + r) * kNr + v * kTilePairs) : _mm512_setzero_ps());
}

// C = A·B over all of K for the block of rows [i0, i0 + rows) (rows <= 32), into c[32][32] on the stack.
template <class Tiles>
inline void block_product(const GemmPanel& p, int64_t i0, int64_t rows, float* c, float* stage) {
  const bool two = rows > kTileRows;  // the second row tile holds rows
  const int64_t lda_bytes = p.lda * 4, b_bytes = kNr * 4;
  Tiles::template zero<0>();
  Tiles::template zero<1>();
  if (two) {
    Tiles::template zero<2>();
    Tiles::template zero<3>();
  }
  float* a0 = stage;  // staging: A rows of each row tile, then B (used for tails only)
  float* a1 = stage + kTileRows * kTilePairs;
  float* bs = stage + 2 * kTileRows * kTilePairs;
  const int64_t rows0 = std::min<int64_t>(rows, kTileRows), rows1 = rows - rows0;
  for (int64_t k0 = 0; k0 < p.k; k0 += kTilePairs) {
    const int64_t pairs = std::min<int64_t>(kTilePairs, p.k - k0);
    const bool k_tail = pairs < kTilePairs;
    // A: in place where the tile's 16 rows and 16 pairs all exist, else from a zero-padded copy.
    if (rows0 == kTileRows && !k_tail) {
      Tiles::template load<4>(p.a + i0 * p.lda + k0, lda_bytes);
    } else {
      stage_a(p, i0, rows0, k0, pairs, a0);
      Tiles::template load<4>(a0, kTilePairs * 4);
    }
    if (two) {
      if (rows1 == kTileRows && !k_tail) {
        Tiles::template load<5>(p.a + (i0 + kTileRows) * p.lda + k0, lda_bytes);
      } else {
        stage_a(p, i0 + kTileRows, rows1, k0, pairs, a1);
        Tiles::template load<5>(a1, kTilePairs * 4);
      }
    }
    // B: 16 pair rows of the panel, columns 0-15 and 16-31.
    const float* b = p.b + k0 * kNr;
    if (k_tail) {
      stage_b(p, k0, pairs, bs);
      b = bs;
    }
    Tiles::template load<6>(b, b_bytes);
    Tiles::template load<7>(b + kTilePairs, b_bytes);
    Tiles::template dot<0, 4, 6>();
    Tiles::template dot<1, 4, 7>();
    if (two) {
      Tiles::template dot<2, 5, 6>();
      Tiles::template dot<3, 5, 7>();
    }
  }
  Tiles::template store<0>(c, kNr * 4);
  Tiles::template store<1>(c + kTilePairs, kNr * 4);
  if (two) {
    Tiles::template store<2>(c + kTileRows * kNr, kNr * 4);
    Tiles::template store<3>(c + kTileRows * kNr + kTilePairs, kNr * 4);
  }
}

// The fp32 epilogue of rows [i0, i0 + rows): act(C + bias) + residual, as the fp32 tiles apply it
// (packed_gemm_impl.h), with the AVX512-BF16 tiles' table erf GELU; then the masked store of the panel's
// columns.
inline void epilogue(const GemmPanel& p, int64_t i0, int64_t rows, const float* c) {
  using T = Avx512TableGeluOps;
  using V = T::V;
  constexpr int W = T::kWidth, NV = kNr / W;
  int valid[NV];
  for (int v = 0; v < NV; ++v) valid[v] = static_cast<int>(std::clamp<int64_t>(p.cols - v * W, 0, W));
  const bool partial = p.cols < kNr;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t row = i0 + r;
    V acc[1][NV];
    for (int v = 0; v < NV; ++v) {
      const V x = T::loadu(c + r * kNr + v * W);
      acc[0][v] = p.bias_cols ? T::add(x, T::loadu(p.bias_cols + v * W)) : x;
    }
    if (p.act != GemmAct::kNone) gemm_impl::activate<T, 1, NV>(p.act, acc);
    if (p.residual) gemm_impl::add_residual<T, 1, NV>(p, row, partial, valid, acc);
    float* dst = p.c + row * p.ldc;
    for (int v = 0; v < NV; ++v) {
      if (partial)
        T::storen(dst + v * W, acc[0][v], valid[v]);
      else
        T::storeu(dst + v * W, acc[0][v]);
    }
  }
}

// One call configures the tiles, runs its panel and releases them: other code on the thread (oneDNN, another
// kernel) may configure them differently between calls. LDTILECFG is slow-ish, so this costs a few percent on
// small panels; keeping the configuration across a kernel's panels is left for when an AMX machine can
// measure it.
template <class Tiles>
void panel(const GemmPanel& p) {
  if (!handles(p)) return gemm_kernels_bf16(1)->panel(p);  // the 14 × 32 tile: the same panel layout
  if (p.m <= 0) return;
  Tiles::configure(kernel_config());
  alignas(64) float c[kMr * kNr];
  alignas(64) float stage[2 * kTileRows * kTilePairs + kTileRows * kNr];
  for (int64_t i0 = 0; i0 < p.m; i0 += kMr) {
    const int64_t rows = std::min<int64_t>(kMr, p.m - i0);
    block_product<Tiles>(p, i0, rows, c, stage);
    epilogue(p, i0, rows, c);
  }
  Tiles::release();
}

}  // namespace amx
}  // namespace
}  // namespace x86
}  // namespace vitrt
