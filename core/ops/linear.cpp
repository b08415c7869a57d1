// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Linear: src [..., K], weight [N,K] (PyTorch layout), bias [N] (optional), residual [..., N] (optional,
// added after the activation) -> [..., N].
#include "ops/op_registry.h"

namespace vitrt {

Status infer_linear(const Node&, const Shape* const* src, int num_src, Shape* dst) {
  const Shape& x = *src[0];
  const Shape& w = *src[1];
  if (x.rank < 1 || w.rank != 2)
    return bad_model("Linear: needs src [...,K] and weight [N,K], got " + x.str() + " and " + w.str());
  if (x.dim(-1) != w[1])
    return bad_model("Linear: input features " + std::to_string(x.dim(-1)) + " != weight " + w.str() +
                     " in-features");
  if (num_src > 2 && src[2] && (src[2]->rank != 1 || (*src[2])[0] != w[0]))
    return bad_model("Linear: bias must be [" + std::to_string(w[0]) + "], got " + src[2]->str());
  dst[0] = x;
  dst[0].dims[x.rank - 1] = w[0];
  if (num_src > 3 && src[3] && *src[3] != dst[0])
    return bad_model("Linear: residual must have the output's shape " + dst[0].str() + ", got " +
                     src[3]->str());
  return Status::Ok();
}

}  // namespace vitrt
