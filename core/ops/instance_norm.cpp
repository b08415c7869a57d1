// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// InstanceNorm (ONNX InstanceNormalization): src [B,C,D1,...], scale [C], bias [C] -> src's shape.
#include <cmath>
#include <string>

#include "ops/op_registry.h"

namespace vitrt {

Status infer_instance_norm(const Node& node, const Shape* const* src, int, Shape* dst) {
  const float eps = std::get<InstanceNormAttrs>(node.attrs).eps;
  if (!std::isfinite(eps) || eps < 0.0f)
    return bad_model("InstanceNorm: epsilon must be finite and >= 0, got " + std::to_string(eps));
  const Shape& x = *src[0];
  if (x.rank < 3) return bad_model("InstanceNorm: input must be [B,C,D1,...] (rank >= 3), got " + x.str());
  for (int i = 1; i <= 2; ++i)
    if (!src[i] || src[i]->rank != 1 || (*src[i])[0] != x[1])
      return bad_model(std::string("InstanceNorm: ") + (i == 1 ? "scale" : "bias") + " must be [" +
                       std::to_string(x[1]) + "], got " + (src[i] ? src[i]->str() : std::string("none")));
  dst[0] = x;
  return Status::Ok();
}

}  // namespace vitrt
