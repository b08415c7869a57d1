// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// SoftmaxAttention's plain block (the online softmax of the fp32 block, flash_attention.h) with
// both products in bf16 on AVX512-BF16, for session precision bf16 (docs/architecture.md 7.1): S = scale·Q·Kᵀ
// with Q and K rounded to bf16, and O += P·V with P (after the fp32 softmax exponentials) and V rounded to
// bf16, each summed in fp32 by vdpbf16ps over pairs (packed_gemm_bf16.h). The maxima, exponentials, row sums
// and the final division stay fp32. Per block the scratch holds Kᵀ and V in pairs (reused across a head's
// query blocks when kt_ready), the scores, the output accumulators and Q in
// pairs.
#include <cstdint>

namespace vitrt {
namespace x86 {

// One block of query rows of one (batch, head): out = softmax(scale·Q·Kᵀ)·V, the keys taken kb at a time.
struct AttnBf16Block {
  const float* q = nullptr;  // first query row of the block, head column offset applied
  const float* k = nullptr;  // first key row, head offset applied
  const float* v = nullptr;
  int64_t q_stride = 0, k_stride = 0, v_stride = 0;  // between tokens (floats)
  int64_t nq = 0;                                    // query rows in this block
  int64_t nk = 0;                                    // keys
  int64_t d = 0;                                     // head dim
  int64_t kb = 0;                                    // key block (a multiple of 16)
  float scale = 1.0f;
  float* out = nullptr;  // first output row, head offset applied
  int64_t out_stride = 0;
  float* scratch = nullptr;  // attn_bf16_scratch_floats(nq, kb, d), 64-byte aligned
  // All keys fit one block (nk <= kb) and scratch already holds this (batch, head)'s Kᵀ and V pairs from the
  // previous call: the packing is skipped (a head's query blocks share it).
  bool kt_ready = false;
};

// Scratch floats of one block of at most qb query rows, key block kb (a multiple of 16) and head dim d.
inline int64_t attn_bf16_scratch_floats(int64_t qb, int64_t kb, int64_t d) {
  auto up = [](int64_t x) { return (x + 15) / 16 * 16; };
  const int64_t dp = (d + 1) / 2, dpad = up(d);
  return up(dp * kb) + up(kb / 2 * dpad) + up(qb * kb) + up(qb * dpad) + up(qb * dp) + up(dp) + 2 * up(qb) +
         16;
}

// Only where x86_has_avx512_bf16(); a.scratch holds attn_bf16_scratch_floats(a.nq, a.kb, a.d), 64-byte
// aligned.
void attention_block_bf16(const AttnBf16Block& a);

}  // namespace x86
}  // namespace vitrt
