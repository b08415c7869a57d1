// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// MatMul (torch.matmul / numpy, both operands of rank >= 2): a [..., M, K] · b [..., K, N] -> [..., M, N],
// the leading (batch) axes broadcast numpy-style. The primitive form of attention's q·kᵀ and p·v.
#include "ops/op_registry.h"

namespace vitrt {

Status infer_matmul(const Node&, const Shape* const* src, int, Shape* dst) {
  const Shape& a = *src[0];
  const Shape& b = *src[1];
  if (a.rank < 2 || b.rank < 2)
    return bad_model("MatMul: both operands need rank >= 2, got " + a.str() + " and " + b.str());
  if (a.dim(-1) != b.dim(-2)) return bad_model("MatMul: inner sizes differ: " + a.str() + " · " + b.str());
  Shape ab = a, bb = b;
  ab.rank = a.rank - 2;
  bb.rank = b.rank - 2;
  Shape batch;
  if (!broadcast_shapes(ab, bb, &batch))
    return bad_model("MatMul: batch axes of " + a.str() + " and " + b.str() + " do not broadcast");
  dst[0] = batch;
  dst[0].rank = batch.rank + 2;
  dst[0].dims[batch.rank] = a.dim(-2);
  dst[0].dims[batch.rank + 1] = b.dim(-1);
  return Status::Ok();
}

}  // namespace vitrt
