// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Elementwise unary ops (Gelu, Relu): the output has the input's shape.
#include "ops/op_registry.h"

namespace vitrt {

Status infer_unary(const Node&, const Shape* const* src, int, Shape* dst) {
  dst[0] = *src[0];
  return Status::Ok();
}

}  // namespace vitrt
