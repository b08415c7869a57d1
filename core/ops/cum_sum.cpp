// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// CumSum (ONNX CumSum): running sums along one axis (core/ir/op_attrs.h, CumSumAttrs). The output has the
// input's shape.
#include <string>

#include "ops/op_registry.h"

namespace vitrt {

Status infer_cum_sum(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<CumSumAttrs>(node.attrs);
  const Shape& x = *src[0];
  int ax = 0;
  if (x.rank < 1 || !normalize_axis(a.axis, x.rank, &ax))
    return bad_model("CumSum: axis " + std::to_string(a.axis) + " is out of range for input " + x.str());
  dst[0] = x;
  return Status::Ok();
}

}  // namespace vitrt
