// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// BatchNorm2d (eval): src [B,C,H,W], gamma, beta, running_mean, running_var [C] -> [B,C,H,W].
#include "ops/op_registry.h"

namespace vitrt {

Status infer_batch_norm2d(const Node&, const Shape* const* src, int, Shape* dst) {
  const Shape& x = *src[0];
  if (x.rank != 4) return bad_model("BatchNorm2d: input must be [B,C,H,W], got " + x.str());
  for (int i = 1; i < 5; ++i)
    if (src[i]->rank != 1 || (*src[i])[0] != x[1])
      return bad_model("BatchNorm2d: parameter " + std::to_string(i) + " must be [" + std::to_string(x[1]) +
                       "], got " + src[i]->str());
  dst[0] = x;
  return Status::Ok();
}

}  // namespace vitrt
