// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The sizes of a NystromAttention (docs/linear_attention.md, Nyströmformer), the rules of its attributes and
// its landmark segments, decided once: shape inference, the file decoder and every backend read them here.
#include <cstdint>
#include <string>

#include "common/status.h"
#include "ir/graph.h"

namespace vitrt {

constexpr int kNumNystromInits = 2;             // NystromInit values are 0 .. kNumNystromInits - 1
constexpr int32_t kMaxNystromIterations = 100;  // the official code runs 6; more is a hostile file

struct NystromGeometry {
  int64_t batch, n, c;  // q, k, v [B,N,C]
  int64_t heads, d;     // C = heads·d
  int64_t m;            // landmarks, 1 <= m <= N
  int64_t ks;           // V conv taps along the tokens (odd), 0 without the conv
};

// Empty when `a` is well formed, else what is wrong: heads and landmarks >= 1, scales finite, a known
// initialisation, 0 <= iterations <= kMaxNystromIterations.
std::string nystrom_attrs_problem(const NystromAttentionAttrs& a);

// From the (planned or run-time) shapes of the inputs: q, k, v [B,N,C] alike, C divisible by heads, m <= N,
// the optional V conv [h,1,ks,1] with ks odd. Fails (bad_model) naming the disagreement and the op.
Status decode_nystrom_geometry(const NystromAttentionAttrs& a, const Shape* const* src, int num_src,
                               NystromGeometry* out);

// Landmark segment j of n tokens in m segments (the T2T-ViT rule when m does not divide n): the first
// (⌊n/m⌋+1)·m − n segments hold ⌊n/m⌋ tokens, the others ⌊n/m⌋ + 1, in token order.
struct NystromSegment {
  int64_t start, count;
};
inline NystromSegment nystrom_segment(int64_t n, int64_t m, int64_t j) {
  const int64_t base = n / m, small = (base + 1) * m - n;
  if (j < small) return {j * base, base};
  return {small * base + (j - small) * (base + 1), base + 1};
}

}  // namespace vitrt
