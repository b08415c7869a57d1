// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LRN (ONNX LRN): local response normalisation across channels (core/ir/op_attrs.h, LrnAttrs). The output
// has the input's shape; these checks are the only ones its attributes get, whichever way a node arrives
// (model file, importer, planner).
#include <cmath>
#include <string>

#include "ops/op_registry.h"

namespace vitrt {

Status infer_lrn(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<LrnAttrs>(node.attrs);
  const Shape& x = *src[0];
  if (x.rank < 3)
    return bad_model("LRN: input " + x.str() + " has rank " + std::to_string(x.rank) +
                     ", expected [N,C,D1,...] (rank 3 or more)");
  if (a.size < 1) return bad_model("LRN: size " + std::to_string(a.size) + ", expected 1 or more");
  if (!std::isfinite(a.alpha) || !std::isfinite(a.beta) || !std::isfinite(a.bias))
    return bad_model("LRN: alpha, beta and bias must be finite (got " + std::to_string(a.alpha) + ", " +
                     std::to_string(a.beta) + ", " + std::to_string(a.bias) + ")");
  dst[0] = x;
  return Status::Ok();
}

}  // namespace vitrt
