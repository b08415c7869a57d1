// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Trilu (ONNX Trilu): the upper or lower triangle of the matrices of the last two axes (core/ir/op_attrs.h,
// TriluAttrs). The output has the input's shape.
#include "ops/op_registry.h"

namespace vitrt {

Status infer_trilu(const Node&, const Shape* const* src, int, Shape* dst) {
  const Shape& x = *src[0];
  if (x.rank < 2) return bad_model("Trilu: input " + x.str() + " has no two axes to form matrices from");
  dst[0] = x;
  return Status::Ok();
}

}  // namespace vitrt
