// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The rules of the ExternalAttention op (ir/op_attrs.h, ExternalAttentionAttrs), shared by its shape
// inference, the file format's decoder and the kernels, so that every way into a session refuses the same
// malformed nodes.
#include <cstdint>
#include <string>

#include "common/shape.h"
#include "common/status.h"
#include "ir/op_attrs.h"

namespace vitrt {

// Empty when `a` is well formed, else what is wrong: heads >= 1, eps finite and >= 0.
std::string external_attention_attrs_problem(const ExternalAttentionAttrs& a);

// The sizes one ExternalAttention node works on.
struct ExternalAttentionDims {
  int64_t batch = 0, tokens = 0, channels = 0;  // src [B,N,C]
  int64_t heads = 1, head_dim = 0;              // C = heads·dh
  int64_t slots = 0;                            // S, the external memory's size
  bool has_b0 = false, has_b1 = false;
};

// Checks the attributes and the input shapes (src [B,N,C], w0 [S,dh], b0 [S]?, w1 [dh,S], b1 [dh]?; a null
// shape is an absent optional input) and fills `d`. The error names the input and the expected shape.
Status decode_external_attention(const ExternalAttentionAttrs& a, const Shape* const* src, int num_src,
                                 ExternalAttentionDims* d);

}  // namespace vitrt
