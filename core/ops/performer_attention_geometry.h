// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The attribute rules and sizes of a PerformerAttention (ir/op_attrs.h; docs/linear_attention.md, Performer),
// decided once: the op's shape inference, the file decoder and every backend's factories and kernels read
// them from here, so every way into a session refuses the same malformed nodes.
#include <cstdint>
#include <string>

#include "common/status.h"
#include "ir/graph.h"

namespace vitrt {

struct PerformerGeometry {
  int64_t batch, nq, nk, c;  // q [B,Nq,C], k and v [B,Nk,C]
  int64_t heads, d;          // C = heads·d
  int64_t m;                 // random features: projection [m,d]
};

// Empty when `a` is well formed, else what is wrong: heads >= 1, a known kernel and key max, the key max 0
// with the generalized kernel (it has none).
std::string performer_attention_attrs_problem(const PerformerAttentionAttrs& a);

// From the (planned or run-time) shapes of the four inputs: q [B,Nq,C], k and v [B,Nk,C] with Nk >= 1,
// C = heads·d, projection [m,d] with m >= 1. Fails (bad_model) naming the disagreement; the caller names the
// op.
Status decode_performer_geometry(const PerformerAttentionAttrs& a, const Shape* const* src, int num_src,
                                 PerformerGeometry* out);

}  // namespace vitrt
