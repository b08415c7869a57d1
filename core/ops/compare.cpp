// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Compare (Equal, Less, Greater, LessOrEqual, GreaterOrEqual, NotEqual; float 0/1 results) and Where, both
// with numpy broadcasting (core/ir/op_attrs.h, CompareAttrs).
#include "ops/op_registry.h"

namespace vitrt {

Status infer_compare(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const int kind = static_cast<int>(std::get<CompareAttrs>(node.attrs).kind);
  if (kind < 0 || kind >= kNumCompareKinds) return bad_model("Compare: unknown kind " + std::to_string(kind));
  return infer_binary_broadcast(node, src, num_src, dst);
}

Status infer_where(const Node&, const Shape* const* src, int, Shape* dst) {
  Shape ab;
  if (!broadcast_shapes(*src[1], *src[2], &ab) || !broadcast_shapes(*src[0], ab, &dst[0]))
    return bad_model("Where: condition " + src[0]->str() + " and values " + src[1]->str() + ", " +
                     src[2]->str() + " do not broadcast");
  return Status::Ok();
}

}  // namespace vitrt
