// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The sizes of a FastformerAttention (docs/linear_attention.md, Fastformer) and the checks that make them
// consistent, decided once: the op's shape inference and every backend's factories and kernels read them
// from here.
#include <cstdint>

#include "common/status.h"
#include "ir/graph.h"

namespace vitrt {

struct FastformerGeometry {
  int64_t batch, n, c;  // q and k [B,N,C]
  int64_t heads, d;     // C = heads·d
};

// From the attributes and the (planned or run-time) shapes of the six inputs: q, k [B,N,C] with N >= 1;
// query_att and key_att weights [heads,C] and biases [heads]; heads >= 1 dividing C; scale finite and > 0.
// Fails (bad_model) naming the disagreement; the caller names the op.
Status decode_fastformer_geometry(const FastformerAttentionAttrs& attrs, const Shape* const* src, int num_src,
                                  FastformerGeometry* out);

}  // namespace vitrt
