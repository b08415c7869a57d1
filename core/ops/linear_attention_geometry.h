// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The sizes of a LinearAttention (SOFT, docs/models.md §3.4–3.6) and the checks that make them consistent,
// decided once: the op's shape inference (linear_attention.cpp) and every backend's factories and kernels
// read them from here.
#include <cstdint>

#include "common/status.h"
#include "ir/graph.h"

namespace vitrt {

struct LinearAttentionGeometry {
  int64_t batch, n, c;    // q and v [B,N,C]
  int64_t heads, d;       // C = heads·d
  int64_t height, width;  // the token grid, N = height·width
  int64_t r;              // landmark conv kernel and stride
  int64_t m_h, m_w, m;    // the landmark grid ⌊H/r⌋ x ⌊W/r⌋, m landmarks
  int64_t k;              // V depthwise conv kernel (odd)
};

// From the (planned or run-time) shapes of the six inputs: q, v [B,N,C]; landmark conv [d,d,r,r]; landmark
// LayerNorm gamma, beta [d]; V conv [h,1,k,k] with k odd; the token grid must hold N tokens and at least one
// landmark. Fails (bad_model) naming the disagreement; the caller names the op.
Status decode_linear_attention_geometry(const LinearAttentionAttrs& attrs, const Shape* const* src,
                                        int num_src, LinearAttentionGeometry* out);

// Whether a kernel can run these attributes: the attention kernel, landmark source and pseudo-inverse kinds
// known (unsupported otherwise), a non-negative Newton iteration count and landmark LayerNorm eps
// (bad_model). The caller names the op.
Status check_linear_attention_attrs(const LinearAttentionAttrs& attrs);

}  // namespace vitrt
