// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cuda/host_plan.h"

#include <climits>
#include <string>
#include <variant>

#include "ops/softmax_attention_layout.h"

namespace vitrt {
namespace cuda {

bool cuda_supports_node(const Node& node) {
  if (node.version != 1 || node.outputs.empty()) return false;
  switch (node.type) {
    case OpType::kLinear: {
      const LinearAttrs* a = std::get_if<LinearAttrs>(&node.attrs);
      return a && node.outputs.size() == 1 && node.inputs.size() <= 3 &&  // no fused residual yet
             (a->activation == Activation::kNone || a->activation == Activation::kRelu ||
              a->activation == Activation::kGeluErf || a->activation == Activation::kGeluTanh);
    }
    case OpType::kLayerNorm:
      return std::holds_alternative<LayerNormAttrs>(node.attrs) && node.outputs.size() == 1;
    case OpType::kGelu: {
      const GeluAttrs* a = std::get_if<GeluAttrs>(&node.attrs);
      return a && node.outputs.size() == 1 &&
             (a->approximation == GeluApproximation::kErf || a->approximation == GeluApproximation::kTanh);
    }
    case OpType::kAdd:
    case OpType::kMul:
      return node.inputs.size() == 2 && node.outputs.size() == 1;
    case OpType::kSoftmaxAttention: {
      const SoftmaxAttentionAttrs* a = std::get_if<SoftmaxAttentionAttrs>(&node.attrs);
      // not yet: the scale on q (Swin), cosine attention (Swin V2)
      if (!a || a->num_heads < 1 || a->scale_on_q || a->qk_norm || !a->head_scales.empty()) return false;
      const int layout_inputs = softmax_attention_layout_inputs(a->inputs);
      if (layout_inputs == 0) return false;  // unknown layout
      // Not yet: the score bias and mask inputs and the score export output (LaViT, Swin).
      const size_t nb = static_cast<size_t>(layout_inputs);
      if (node.inputs.size() < nb) return false;
      for (size_t i = nb; i < node.inputs.size(); ++i)
        if (node.inputs[i] != kAbsent) return false;
      return node.outputs.size() == 1;
    }
    default:
      return false;
  }
}

Status linear_gemm_args(int64_t rows, int64_t n, int64_t k, GemmArgs* out) {
  if (rows < 0 || n < 0 || k < 0 || rows > INT_MAX || n > INT_MAX || k > INT_MAX)
    return unsupported("Linear of " + std::to_string(rows) + "x" + std::to_string(k) + " by " +
                       std::to_string(n) + " exceeds cuBLAS's 32-bit dimensions");
  // Row-major y[M,N] is column-major Yc[N,M] = W·xᵀ in column-major terms: the row-major W [N,K] buffer is
  // the column-major K x N matrix Wᵀ (lda = K), transposed back; x [M,K] is column-major K x M (ldb = K).
  GemmArgs g;
  g.trans_a = true;
  g.trans_b = false;
  g.m = static_cast<int>(n);
  g.n = static_cast<int>(rows);
  g.k = static_cast<int>(k);
  g.lda = static_cast<int>(k > 0 ? k : 1);
  g.ldb = static_cast<int>(k > 0 ? k : 1);
  g.ldc = static_cast<int>(n > 0 ? n : 1);
  *out = g;
  return Status::Ok();
}

Status plan_broadcast(const Shape& a, const Shape& b, const Shape& y, BroadcastPlan* out) {
  BroadcastPlan p;
  if (a.rank > y.rank || b.rank > y.rank) return bad_input("broadcast: input rank above the output's");
  int64_t ca[kMaxRank], cb[kMaxRank], sa[kMaxRank], sb[kMaxRank], sy[kMaxRank];
  auto contiguous = [](const Shape& s, int64_t* st) {
    int64_t v = 1;
    for (int i = s.rank - 1; i >= 0; --i) {
      st[i] = v;
      v *= s.dims[i];
    }
  };
  contiguous(a, ca);
  contiguous(b, cb);
  contiguous(y, sy);
  for (int i = 0; i < y.rank; ++i) {
    const int ia = i - (y.rank - a.rank), ib = i - (y.rank - b.rank);
    const int64_t da = ia < 0 ? 1 : a.dims[ia], db = ib < 0 ? 1 : b.dims[ib];
    if ((da != 1 && da != y.dims[i]) || (db != 1 && db != y.dims[i]))
      return bad_input("broadcast: " + a.str() + " and " + b.str() + " do not broadcast to " + y.str());
    sa[i] = (ia < 0 || (da == 1 && y.dims[i] != 1)) ? 0 : ca[ia];
    sb[i] = (ib < 0 || (db == 1 && y.dims[i] != 1)) ? 0 : cb[ib];
  }
  p.numel = y.numel();
  p.same = a.numel() == p.numel && b.numel() == p.numel;
  // Drop size-1 dims; merge dim i into the previous one when contiguous for a, b and y.
  for (int i = 0; i < y.rank; ++i) {
    if (y.dims[i] == 1) continue;
    if (p.rank > 0 && p.sa[p.rank - 1] == sa[i] * y.dims[i] && p.sb[p.rank - 1] == sb[i] * y.dims[i]) {
      p.dims[p.rank - 1] *= y.dims[i];
      p.sa[p.rank - 1] = sa[i];
      p.sb[p.rank - 1] = sb[i];
    } else {
      p.dims[p.rank] = y.dims[i];
      p.sa[p.rank] = sa[i];
      p.sb[p.rank] = sb[i];
      ++p.rank;
    }
  }
  (void)sy;
  *out = p;
  return Status::Ok();
}

}  // namespace cuda
}  // namespace vitrt
