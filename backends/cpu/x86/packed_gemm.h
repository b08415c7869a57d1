// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The x86 backend's own fp32 GEMM, C[M, N] = A[M, K] · B[K, N] (+ bias, activation), with B in packed column
// panels: panel p holds columns [p·NR, p·NR + NR) as K rows of NR contiguous floats, zero past N. Linear
// packs its weight into panels once at plan time; Conv2d packs its im2col panels at run time into the
// workspace (a pointwise conv's whole panels inside one image are read in place instead, GemmPanel::ldb). The
// register tile is MR rows × NR columns of accumulators (AVX-512: 6 × 64, 8 × 48 or 14 × 32 in 24-28 zmm;
// AVX2: 6 × 16 in 12 ymm), each k one broadcast of A per row and NR/16 loads of B; K is blocked so one block
// of the panel stays in cache while the row tiles stream past it. Bias, activation and residual are applied
// in registers at the last store. Nothing here allocates or threads: the callers split the work.
#include <cstdint>

#include "ir/op_attrs.h"

namespace vitrt {
namespace x86 {

// The activation applied to the accumulators before they are stored (then the residual is added).
enum class GemmAct : int8_t { kNone = 0, kRelu, kGeluErf, kGeluTanh, kSilu, kHardSwish, kRelu6 };

inline GemmAct gemm_act(Activation a) {
  switch (a) {
    case Activation::kRelu:
      return GemmAct::kRelu;
    case Activation::kGeluErf:
      return GemmAct::kGeluErf;
    case Activation::kGeluTanh:
      return GemmAct::kGeluTanh;
    case Activation::kSilu:
      return GemmAct::kSilu;
    case Activation::kHardSwish:
      return GemmAct::kHardSwish;
    case Activation::kRelu6:
      return GemmAct::kRelu6;
    default:
      return GemmAct::kNone;
  }
}

// Memory the caller reads after this panel (Conv2d: the input of its next im2col panel): `rows` runs of
// `floats` floats from `base`, `stride` floats apart. The panel prefetches it into L2 a few lines per
// register tile, so that its loads, which would otherwise stall the packer, overlap the FMAs.
struct GemmPrefetch {
  const float* base = nullptr;
  int64_t rows = 0, stride = 0, floats = 0;
};
constexpr int kGemmMaxPrefetch = 4;

// One panel's worth of C: rows [0, m) × columns [0, cols) of the panel (cols <= NR).
struct GemmPanel {
  const float* a = nullptr;  // A[0, 0], row-major with leading dimension lda (or packed: a_packed)
  int64_t lda = 0;
  // A packed by gemm_pack_a with this tile's MR: `a` is the packed matrix, a_rows its rows (padded to MR),
  // a_row0 the packed row that is row 0 here (a multiple of MR); lda is not used. Each K block of each
  // register tile is then one contiguous run of A, and the blocks of all tiles follow each other in the order
  // the panel reads them.
  bool a_packed = false;
  int64_t a_rows = 0, a_row0 = 0;
  // Floats from A[i, t] to A[i, t + 1] when A is not packed: 0 means 1 (row-major). Conv2d's pixel-row
  // product (gemm_conv2d_rows.cpp) reads A[pixel, t] = src[t·a_step + pixel] from an NCHW image or its
  // im2col, with lda = 1.
  int64_t a_step = 0;
  // Conv2d's implicit product (gemm_conv2d_rows.cpp, with no im2col): A[i, t] = a[base(i) + a_offsets[t]],
  // where the rows are output pixels, a_row_width of them per output row, and row i sits at
  // base(i) = (i / a_row_width)·a_row_stride + (i % a_row_width)·lda in the (padded) input; a_offsets[t] is
  // tap t's offset (channel, kernel row and column). Row tiles then never cross an output row (each output
  // row is cut into near-equal tiles), so a tile's rows are lda floats apart at every t. fp32 tiles only.
  const int32_t* a_offsets = nullptr;
  int64_t a_row_width = 0, a_row_stride = 0;
  // Row tiles of near-equal height (49 rows on 6-row tiles: 5 × 5 and 4 × 6 instead of 8 × 6 and one row of
  // 1, which runs at a fraction of the FMA rate) instead of MR-row tiles and a short last one. Not with
  // a_packed, whose row tiles are fixed at MR.
  bool even_rows = false;
  int64_t m = 0, k = 0;
  const float* b = nullptr;  // the packed panel: k × NR
  // Floats from one row of the panel to the next: 0 means NR (packed). fp32 tiles only: Conv2d reads a
  // pointwise conv's full panels in place, NR consecutive pixels of each input channel, a plane apart.
  int64_t ldb = 0;
  int64_t cols = 0;
  float* c = nullptr;  // C[0, first column of the panel], leading dimension ldc
  int64_t ldc = 0;
  const float* bias_cols = nullptr;  // NR floats (zero-padded) added to every row, or null
  const float* bias_rows = nullptr;  // m floats, one per row, or null
  GemmAct act = GemmAct::kNone;
  const float* residual = nullptr;  // added last, in registers: R[0, first column of the panel], ld ldr
  int64_t ldr = 0;
  bool residual_before_act = false;  // act(acc + R) (Conv2d's residual) instead of act(acc) + R (Linear's)
  // Final stores bypass the caches (non-temporal) where C rows are 64-byte aligned: for results much larger
  // than the caches, it saves reading every C line before writing it.
  bool stream = false;
  GemmPrefetch prefetch[kGemmMaxPrefetch];  // the first `prefetches` of them
  int prefetches = 0;
};

struct GemmKernels {
  const char* name;
  int mr, nr;
  void (*panel)(const GemmPanel& p);
};

// AVX-512 tiles, rows × columns: 8 × 48, 14 × 32 and 6 × 64 (index 0..2); AVX2 has one (6 × 16).
const GemmKernels* gemm_kernels_avx512(int which);
const GemmKernels* gemm_kernels_avx2();
// The tile for C[m, n] = A[m, k]·B (A's rows k floats apart; pass k = 1 for A packed by gemm_pack_a): the one
// that pads m × n the least (on Zen 4 the others must pad 15% less than 6 × 64: packed_gemm.cpp), or AVX-512
// tile `tile` (0..2) when it is not negative (X86Options::gemm_tile, for measurements).
const GemmKernels* gemm_kernels_for(bool avx512, int64_t m, int64_t n, int64_t k, int tile = -1);
// The same choice for panels whose last one runs at the full panel width when narrower (narrows = false: the
// bf16 panels, gemm_kernels_bf16_for) or on fewer vectors (true: the fp32 panels, gemm_kernels_for), on a CPU
// whose 512-bit FMAs run as two halves (split: x86_avx512_is_split()) or not.
const GemmKernels* gemm_kernels_choose(bool avx512, int64_t m, int64_t n, int64_t k, int tile, bool narrows,
                                       bool split);

// Packs row-major W [n, k] (a PyTorch Linear weight: C = A·Wᵀ) into ceil(n / nr) panels; dst holds
// gemm_packed_floats(n, k, nr).
inline int64_t gemm_panels(int64_t n, int nr) {
  return (n + nr - 1) / nr;
}
inline int64_t gemm_packed_floats(int64_t n, int64_t k, int nr) {
  return gemm_panels(n, nr) * k * nr;
}
void gemm_pack_transposed(const float* w, int64_t n, int64_t k, int nr, float* dst);
// The same with row j of w at w + j·ldw and every element times `scale` (NystromAttention's scaled key
// blocks, read in place from [B, N, C]); gemm_pack_transposed is ldw = k, scale = 1.
void gemm_pack_transposed_scaled(const float* w, int64_t ldw, int64_t n, int64_t k, float scale, int nr,
                                 float* dst);
// Packs row-major B [k, n] (leading dimension ldb: C = A·B) into ceil(n / nr) panels, zero past n.
void gemm_pack_rows(const float* b, int64_t ldb, int64_t k, int64_t n, int nr, float* dst);
// K is cut into equal blocks of at most kGemmMaxBlockK (the last one possibly shorter, never a short tail
// that reloads and stores C for little work): the size of each but the last.
constexpr int64_t kGemmMaxBlockK = 192;
inline int64_t gemm_k_block(int64_t k) {
  const int64_t blocks = (k + kGemmMaxBlockK - 1) / kGemmMaxBlockK;
  return blocks > 0 ? (k + blocks - 1) / blocks : 0;
}
// Packs row-major A [m, k] (leading dimension lda), rows padded with zeros to mp = ceil(m / mr)·mr, in the
// order the panel reads it: K block by K block (gemm_k_block: block b holds columns [k0, k0 + kc) and starts
// at k0·mp), and in each, row tile by row tile (tile t at t·mr·kc), kc columns of mr rows (A[t·mr + r, k0 +
// j] at j·mr + r). dst holds gemm_packed_a_floats(m, k, mr). Conv2d packs its weight so at plan time.
inline int64_t gemm_packed_a_rows(int64_t m, int mr) {
  return (m + mr - 1) / mr * mr;
}
inline int64_t gemm_packed_a_floats(int64_t m, int64_t k, int mr) {
  return gemm_packed_a_rows(m, mr) * k;
}
void gemm_pack_a(const float* a, int64_t lda, int64_t m, int64_t k, int mr, float* dst);
// The rows of A that one pass over all of B's panels multiplies: kept in L2 while the panels stream past.
constexpr int64_t kGemmRowBlockBytes = 256 << 10;

// What gemm_packed_product applies at the last store, as GemmPanel's fields of the same names; bias_cols is
// padded to whole panels, residual is R[rows, n] with leading dimension ldr.
struct GemmEpilogue {
  const float* bias_cols = nullptr;
  GemmAct act = GemmAct::kNone;
  const float* residual = nullptr;
  int64_t ldr = 0;
};

// C[rows, n] = act(A[rows, k]·B + bias) + residual, single-threaded, with B packed by gemm_pack_rows or
// gemm_pack_transposed: each element summed over k in order, one FMA a step. A is taken in row blocks of
// kGemmRowBlockBytes, so it is read from memory once however many panels B has.
void gemm_packed_product(const GemmKernels* g, const float* a, int64_t lda, int64_t rows, int64_t k,
                         const float* packed_b, int64_t n, float* c, int64_t ldc, const GemmEpilogue& e = {});

}  // namespace x86
}  // namespace vitrt
