// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Expand (ONNX Expand; core/ir/op_attrs.h, ExpandAttrs): the source broadcast with `shape`, numpy rules in
// both directions.
#include "ops/op_registry.h"

namespace vitrt {

Status infer_expand(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<ExpandAttrs>(node.attrs);
  Shape target;
  if (!Shape::from_vector(a.shape, &target))
    return bad_model("Expand: target of rank " + std::to_string(a.shape.size()) + " (at most " +
                     std::to_string(kMaxRank) + ")");
  for (int64_t v : a.shape)
    if (v < 1) return bad_model("Expand: target dimension " + std::to_string(v) + " (must be at least 1)");
  if (!broadcast_shapes(*src[0], target, &dst[0]))
    return bad_model("Expand: " + src[0]->str() + " does not broadcast to " + target.str());
  return Status::Ok();
}

}  // namespace vitrt
