// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LayerNorm over the last axis: src [..., C], gamma [C]?, beta [C]? -> [..., C].
#include "ops/op_registry.h"

namespace vitrt {

Status infer_layer_norm(const Node&, const Shape* const* src, int num_src, Shape* dst) {
  const Shape& x = *src[0];
  if (x.rank < 1) return bad_model("LayerNorm: scalar input");
  for (int i = 1; i < num_src; ++i)
    if (src[i] && (src[i]->rank != 1 || (*src[i])[0] != x.dim(-1)))
      return bad_model("LayerNorm: parameter must be [" + std::to_string(x.dim(-1)) + "], got " + src[i]->str());
  dst[0] = x;
  return Status::Ok();
}

}  // namespace vitrt
