// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The host-side planning of the CUDA kernels, kept free of CUDA headers so that it is unit-tested on machines
// without a GPU (tests/cuda): which nodes the backend supports, the cuBLAS arguments of Linear, the broadcast
// plan of Add/Mul (whose index arithmetic the device kernel shares through VITRT_HD). Where Q, K and V of a
// SoftmaxAttention sit is the op's own layout decoder (ops/softmax_attention_layout.h).
#include <cstdint>

#include "common/status.h"
#include "ir/graph.h"

#if defined(__CUDACC__)
#define VITRT_HD __host__ __device__
#else
#define VITRT_HD
#endif

namespace vitrt {
namespace cuda {

// Whether the CUDA backend implements `node` (type, version, attributes, operand counts).
bool cuda_supports_node(const Node& node);

// Largest head_dim the fused attention kernel handles.
constexpr int64_t kMaxAttentionHeadDim = 256;

// Arguments of a column-major cublasSgemm(handle, trans_a, trans_b, m, n, k, 1, A, lda, B, ldb, 0, C, ldc)
// computing the row-major y[M,N] = x[M,K]·Wᵀ with W the PyTorch weight [N,K]: A = W, B = x, C = y.
struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
};
// Fails (unsupported) when a dimension does not fit cuBLAS's int.
Status linear_gemm_args(int64_t rows, int64_t n, int64_t k, GemmArgs* out);

// dst = f(a, b) with numpy broadcasting, as a flat loop over dst: dims of size 1 dropped, dims contiguous for
// all three operands merged.
struct BroadcastPlan {
  int rank = 0;
  int64_t numel = 0;
  int64_t dims[kMaxRank] = {};
  int64_t sa[kMaxRank] = {};  // element strides of a and b along dims (0 = broadcast)
  int64_t sb[kMaxRank] = {};
  bool same = false;          // a, b and dst all have the same number of elements: offsets are the index
};
Status plan_broadcast(const Shape& a, const Shape& b, const Shape& y, BroadcastPlan* out);

// Offsets into a and b of dst's flat element i.
VITRT_HD inline void broadcast_offsets(const BroadcastPlan& p, int64_t i, int64_t* oa, int64_t* ob) {
  int64_t a = 0, b = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    const int64_t n = p.dims[d];
    const int64_t q = i / n;
    const int64_t r = i - q * n;
    a += r * p.sa[d];
    b += r * p.sb[d];
    i = q;
  }
  *oa = a;
  *ob = b;
}

}  // namespace cuda
}  // namespace vitrt
