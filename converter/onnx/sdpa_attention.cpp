// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// normalize_sdpa_attention (graph_normalize.h). torch's dynamo exporter writes
// F.scaled_dot_product_attention(q, k, v) (timm's attention, torchvision's nn.MultiheadAttention under torch
// 2.x) without a fused op:
//   kᵀ = k.reshape(-1, N, d).transpose(1, 2).reshape(B, h, d, N)   Reshape, Transpose (0,2,1), Reshape
//   s  = (q · √scale) @ (kᵀ · √scale)                              Mul, Mul, MatMul
//   o  = softmax(s, -1) @ v
// Two rewrites give the form --emit primitive writes, which the planner's fuse_attention matches:
//   1. the Reshape / Transpose / Reshape that swaps the last two axes through merged leading axes becomes
//      one Transpose of those two axes (data movement: exact);
//   2. the two scalar factors on the MatMul's operands, whose product only a Softmax reads, become one
//      factor fl(a·b) on the product: (q @ kᵀ) · fl(a·b). Exact when a and b are powers of two (√scale =
//      d^-1/4 is for head widths d = 16 and 256); otherwise the scores differ from the export's in the last
//      bits, as in fuse_attention's division form (one rounding of the product instead of one per operand).
#include <cmath>

#include "ir/shape_propagation.h"
#include "onnx/graph_normalize.h"
#include "onnx/graph_rewrite.h"

namespace vitrt::convert {
namespace {

class SdpaNormalizer {
 public:
  explicit SdpaNormalizer(Graph& g) : g_(g) {}

  Status run(int* rewritten) {
    *rewritten = 0;
    int swaps = 0;
    VITRT_RETURN_IF_ERROR(merge_swaps(&swaps));
    VITRT_RETURN_IF_ERROR(merge_scales(rewritten));
    return Status::Ok();
  }

 private:
  // Rewrite 1: Reshape [L.., N, d] -> [ΠL, N, d], Transpose (0,2,1), Reshape -> [L.., d, N] => Transpose.
  Status merge_swaps(int* count) {
    std::vector<Shape> s1(g_.tensors.size()), s2(g_.tensors.size());
    VITRT_RETURN_IF_ERROR(propagate_shapes(g_, 1, s1.data()));
    VITRT_RETURN_IF_ERROR(propagate_shapes(g_, 2, s2.data()));
    const GraphUses uses(g_);
    std::vector<bool> erase(g_.nodes.size(), false);
    std::vector<std::vector<Node>> before(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& t = g_.nodes[i];
      if (t.type != OpType::kTranspose ||
          std::get<TransposeAttrs>(t.attrs).perm != std::vector<int32_t>{0, 2, 1})
        continue;
      const int32_t rows = t.inputs[0], swapped = t.outputs[0];
      const Node* in = uses.producer_of(g_, rows, OpType::kReshape);
      if (!in || uses.readers[rows] != 1 || uses.readers[swapped] != 1 || uses.reader[swapped] < 0) continue;
      const size_t last = static_cast<size_t>(uses.reader[swapped]);
      const Node& out = g_.nodes[last];
      const size_t first = static_cast<size_t>(uses.producer[rows]);
      if (out.type != OpType::kReshape || erase[first] || erase[last]) continue;
      const int32_t k = in->inputs[0], kt = out.outputs[0];
      bool fits = true;
      for (const std::vector<Shape>* s : {&s1, &s2}) {
        const Shape& ks = (*s)[k];
        const int r = ks.rank;
        if (r < 3 || (*s)[rows].rank != 3 || (*s)[kt].rank != r) {
          fits = false;
          break;
        }
        int64_t lead = 1;
        for (int d = 0; d < r - 2; ++d) lead *= ks[d];
        Shape want = ks;
        want.dims[r - 2] = ks[r - 1];
        want.dims[r - 1] = ks[r - 2];
        fits = fits && (*s)[rows] == Shape{lead, ks[r - 2], ks[r - 1]} && (*s)[kt] == want;
      }
      if (!fits) continue;
      TransposeAttrs perm;
      const int r = s1[k].rank;
      for (int d = 0; d < r - 2; ++d) perm.perm.push_back(d);
      perm.perm.push_back(r - 1);
      perm.perm.push_back(r - 2);
      erase[first] = erase[i] = erase[last] = true;
      before[last].push_back(make_node(OpType::kTranspose, perm, {k}, kt, out.name));
      ++*count;
    }
    if (*count) splice_and_prune(g_, std::move(erase), std::move(before));
    return Status::Ok();
  }

  // Rewrite 2: Softmax(MatMul(Mul(q, a), Mul(kt, b))) => Softmax(Mul(MatMul(q, kt), fl(a·b))).
  Status merge_scales(int* count) {
    const GraphUses uses(g_);
    std::vector<bool> erase(g_.nodes.size(), false);
    std::vector<std::vector<Node>> before(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& sm = g_.nodes[i];
      if (sm.type != OpType::kSoftmax) continue;
      const int32_t scores = sm.inputs[0];
      const Node* mm = uses.producer_of(g_, scores, OpType::kMatMul);
      if (!mm || uses.readers[scores] != 1 || mm->inputs.size() != 2) continue;
      const size_t mi = static_cast<size_t>(uses.producer[scores]);
      int32_t operand[2];
      float factor[2];
      size_t muls[2];
      bool ok = !erase[mi];
      for (int side = 0; side < 2 && ok; ++side) {
        const int32_t t = mm->inputs[side];
        const Node* mul = uses.producer_of(g_, t, OpType::kMul);
        ok = mul && uses.readers[t] == 1 && mul->inputs.size() == 2 && !erase[uses.producer[t]];
        if (!ok) break;
        muls[side] = static_cast<size_t>(uses.producer[t]);
        const int c = scalar_float_constant(g_, mul->inputs[1], &factor[side])   ? 1
                      : scalar_float_constant(g_, mul->inputs[0], &factor[side]) ? 0
                                                                                 : -1;
        ok = c >= 0 && !g_.tensors[mul->inputs[1 - c]].is_constant;
        if (ok) operand[side] = mul->inputs[1 - c];
      }
      if (!ok) continue;
      const float scale = static_cast<float>(static_cast<double>(factor[0]) * factor[1]);
      if (!std::isfinite(scale) || scale == 0) continue;
      const std::string& name = mm->name;
      const int32_t c = g_.add_constant(name + ".scale", Shape{1}, {scale});
      const int32_t product = g_.add_activation(name + ".product", Shape());
      before[mi].push_back(make_node(OpType::kMatMul, NoAttrs{}, {operand[0], operand[1]}, product, name));
      before[mi].push_back(make_node(OpType::kMul, NoAttrs{}, {product, c}, scores, name + ".scaled"));
      erase[mi] = erase[muls[0]] = erase[muls[1]] = true;
      ++*count;
    }
    if (*count) splice_and_prune(g_, std::move(erase), std::move(before));
    return Status::Ok();
  }

  Graph& g_;
};

}  // namespace

Status normalize_sdpa_attention(Graph* g, int* rewritten) {
  return SdpaNormalizer(*g).run(rewritten);
}

}  // namespace vitrt::convert
