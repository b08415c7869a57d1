// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Plain SoftmaxAttention (no score terms) as a flash-attention loop, one table per ISA level:
// flash_attention_impl.h writes it once on xsimd batches, flash_attention_avx512.cpp and
// flash_attention_avx2.cpp instantiate it. Two steps:
// - pack: one (batch, head)'s K and V, into the caller's scratch. Kᵀ as panels of nr keys (64 at
//   AVX-512, 16 at AVX2), [nkp / nr][d][nr]: a score tile streams one panel of a few KB that stays in L1 (nkp
//   is nk rounded up to 16; the last panel is as wide as the keys left, a multiple of 16). V, where d is not
//   a multiple of 16, as rows of dp floats, [nkp][dp] with d rounded up to 16, so that P·V has no scalar
//   column tail; otherwise P·V reads V in place. Keys past nk and columns past d are zero.
// - block: one block of query rows against all keys, kb keys at a time, with an online softmax (running
//   max and sum, the outputs rescaled when the max grows): S = scale·Q·Kᵀ on a register tile, P = exp(S -
//   max), O += P·V on a register tile. No Nq x Nk matrix: the per-thread scratch is one score block and the
//   output accumulators.
// Each score is Σ_t q_t·k_t in t order with one FMA per term, then times scale; each output Σ_j p_j·v_j in j
// order: the reference kernel's order of terms. Callers split the work over threads; nothing here
// allocates or threads.
#include <cstdint>

namespace vitrt {
namespace x86 {

// Keys [j0, j1) of one (batch, head): j0 a multiple of the Kᵀ panel width (64), j1 <= nkp.
struct FlashPack {
  const float* k = nullptr;  // first key row of the head (head column offset applied)
  const float* v = nullptr;
  int64_t k_stride = 0, v_stride = 0;  // between tokens (floats)
  int64_t nk = 0, d = 0;
  int64_t nkp = 0;  // nk rounded up to 16
  int64_t j0 = 0, j1 = 0;
  float* kp = nullptr;  // the head's packed Kᵀ, flash_k_floats
  float* vp = nullptr;  // the head's packed V, flash_v_floats, or null: V is read in place
};

struct FlashBlock {
  const float* q = nullptr;  // first query row of the block, head column offset applied
  int64_t q_stride = 0;
  int64_t rows = 0;           // query rows in this block, at most the planned block
  const float* kp = nullptr;  // the head's packed Kᵀ
  const float* v = nullptr;   // the head's V: packed, or in place where d % 16 == 0
  int64_t v_stride = 0;       // between keys: dp packed, the token stride in place
  int64_t nk = 0, d = 0;
  int64_t kb = 0;  // keys per online-softmax step: a multiple of 64, or all keys (rounded up to 16)
  float scale = 1.0f;
  float* out = nullptr;  // first output row, head offset applied
  int64_t out_stride = 0;
  float* scratch = nullptr;  // flash_scratch_floats(rows, kb, d)
};

struct FlashSimd {
  void (*pack)(const FlashPack& p);
  void (*block)(const FlashBlock& b);
};

const FlashSimd* flash_simd_avx512();
const FlashSimd* flash_simd_avx2();

inline int64_t flash_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

// Sizes in floats, each a multiple of 16 (so consecutive buffers stay 64-byte aligned). Callers bound the
// shapes with checked arithmetic first (flash sizes are at most a few times those of K and V).
inline int64_t flash_k_floats(int64_t nk, int64_t d) {
  return flash_up(flash_up(nk, 16) * d, 16);
}
inline bool flash_packs_v(int64_t d) {
  return d % 16 != 0;
}
inline int64_t flash_v_floats(int64_t nk, int64_t d) {
  return flash_packs_v(d) ? flash_up(nk, 16) * flash_up(d, 16) : 0;
}
// The score block [rows][kb], the output accumulators [rows][dp], the running max and sum.
inline int64_t flash_scratch_floats(int64_t rows, int64_t kb, int64_t d) {
  return flash_up(rows * kb, 16) + rows * flash_up(d, 16) + 2 * flash_up(rows, 16);
}

}  // namespace x86
}  // namespace vitrt
