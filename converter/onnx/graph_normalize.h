// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Normalisation of the imported IR graph after lowering, so that the planner sees the forms the .pth route
// builds (docs/onnx.md, "Exported reference models"). Each rewrite leaves the graph computing the same
// values; where rounding can differ it is said at the rewrite.
#include "common/status.h"
#include "ir/graph.h"

namespace vitrt::convert {

// Σ_c (a[.., i, c] − l[.., j, c])² written as one Slice/Sub/Mul/Add group per channel c (torch.onnx.export of
// a Python loop over the last axis, as SOFT's Gaussian kernel, tools/reference/vitrt_reference/soft.py
// gaussian_sq_dist) becomes the broadcast form --emit primitive writes (converter/arch/primitive_emit.cpp):
// Sub(Reshape(a, [.., N, 1, d]), Reshape(l, [.., 1, m, d])) → Mul by itself → ReduceSum over the last axis.
// Returns how many sums were rewritten.
Status fold_unrolled_distances(Graph* g, int* rewritten);

// Conv2d (no activation) read only by a Relu becomes one Conv2d with the ReLU epilogue, as the .pth route
// writes Conv + BatchNorm + ReLU stems, so that the channels-last passes (which run before fuse_epilogue) see
// the same form. Returns how many were folded.
Status fold_conv_relu(Graph* g, int* folded);

// torch.nn.MultiheadAttention's self-attention as torch.onnx.export writes it (token-major: x.transpose(0,
// 1), in_proj, Slice ×3, views to [N, B·h, d], q · 2^-k, softmax(q @ kᵀ) @ v, out_proj, transposed back)
// becomes the packed-qkv form --emit primitive writes for SoftmaxAttention, which the planner's
// fuse_attention matches. Only a power-of-two scale is moved onto the scores (exact; multihead_attention.cpp
// says why). Also torch 2's form (through scaled_dot_product_attention, after normalize_sdpa_attention),
// whose data movement is checked by tracing element indices. Returns how many blocks were rewritten.
Status normalize_multihead_attention(Graph* g, int* rewritten);

// F.scaled_dot_product_attention as torch's dynamo exporter writes it: kᵀ through a Reshape / Transpose
// (0,2,1) / Reshape of merged leading axes becomes one Transpose of the last two axes (exact), and the two
// scalar factors √scale on q and on kᵀ become one on their product, which only a Softmax reads (exact for
// powers of two, else a last-bit difference; sdpa_attention.cpp says why). Returns how many scores were
// rewritten.
Status normalize_sdpa_attention(Graph* g, int* rewritten);

}  // namespace vitrt::convert
