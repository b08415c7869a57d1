// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Where Q, K and V of a SoftmaxAttention sit in its inputs, for each AttentionInputs layout (ir/op_attrs.h):
// (q, k, v), packed (qkv) [B,N,3C], or (q, kv) with kv packed [B,Nk,2C]. This is the one place that decides
// it: the op's shape inference (softmax_attention.cpp) and every backend's factories and kernels read it.
#include <cstdint>

#include "common/status.h"
#include "ir/graph.h"

namespace vitrt {

// Element offsets and strides are in floats. Plain data, so that device code may take it by value.
struct SoftmaxAttentionLayout {
  int q_src = 0, k_src = 0, v_src = 0;               // the input holding Q, K and V
  int64_t q_off = 0, k_off = 0, v_off = 0;           // from the start of that input
  int64_t q_stride = 0, k_stride = 0, v_stride = 0;  // between tokens
  int64_t q_batch = 0, k_batch = 0, v_batch = 0;     // between batch items
  int64_t batch = 0, nq = 0, nk = 0, c = 0, heads = 0, head_dim = 0;
};

// Inputs the layout itself takes (3, 1 or 2); an optional score bias and after it an optional score mask
// follow them. 0 for an unknown layout.
int softmax_attention_layout_inputs(AttentionInputs layout);

// The score terms after the layout's inputs (ir/op_attrs.h, SoftmaxAttentionAttrs): a bias [B,h,Nq,Nk], or
// [1,h,Nq,Nk] broadcast over the batch; then a mask [nW,Nq,Nk], batch item b adding mask[b mod nW] to every
// head. Offsets in floats.
struct SoftmaxAttentionTerms {
  bool bias = false;
  int64_t bias_batch = 0;  // between batch items of the bias: h·Nq·Nk, or 0 when broadcast
  int64_t mask_windows = 0;  // nW; 0 without a mask
};

// Decodes and checks the bias and mask shapes from src[nb..num_src) (nb = the layout's inputs) against the
// decoded layout: at most two, the bias present when the mask is, B a multiple of nW. Fails (bad_model)
// naming the term and the shape expected; the caller names the op.
Status decode_softmax_attention_terms(const SoftmaxAttentionLayout& l, int nb, const Shape* const* src,
                                      int num_src, SoftmaxAttentionTerms* out);

// Decodes the layout from the (planned or run-time) input shapes src[0..num_src), of which the layout's own
// inputs must be present, [B,N,C], and agree with each other and with num_heads. Does not look at a score
// bias. Fails (bad_model) naming the disagreement; the caller names the op.
Status decode_softmax_attention_layout(const SoftmaxAttentionAttrs& attrs, const Shape* const* src,
                                       int num_src, SoftmaxAttentionLayout* out);

}  // namespace vitrt
