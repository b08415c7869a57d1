// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Elementwise binary ops (Add, Mul) with numpy broadcasting.
#include "ops/op_registry.h"

namespace vitrt {

Status infer_binary_broadcast(const Node& node, const Shape* const* src, int, Shape* dst) {
  if (!broadcast_shapes(*src[0], *src[1], &dst[0]))
    return bad_model(std::string(op_type_name(node.type)) + ": shapes " + src[0]->str() + " and " + src[1]->str() +
                     " do not broadcast");
  return Status::Ok();
}

}  // namespace vitrt
