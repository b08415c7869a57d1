// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ArgMax (kind max or min; ONNX ArgMax / ArgMin): the index along one axis, as a float32 value
// (core/ir/op_attrs.h, ArgMaxAttrs). The axis is dropped, or kept as 1 with keepdims.
#include <string>

#include "ops/op_registry.h"

namespace vitrt {

Status infer_arg_max(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<ArgMaxAttrs>(node.attrs);
  const Shape& x = *src[0];
  if (a.kind != ArgKind::kMax && a.kind != ArgKind::kMin)
    return bad_model("ArgMax: unknown kind " + std::to_string(static_cast<int>(a.kind)));
  int ax = 0;
  if (x.rank < 1 || !normalize_axis(a.axis, x.rank, &ax))
    return bad_model("ArgMax: axis " + std::to_string(a.axis) + " is out of range for input " + x.str());
  // Every index must be exact as a float32 value: at most 2^24 positions (0 .. 2^24 − 1).
  if (x[ax] < 1 || x[ax] > (int64_t{1} << 24))
    return bad_model("ArgMax: axis " + std::to_string(a.axis) + " of input " + x.str() + " has " +
                     std::to_string(x[ax]) +
                     " elements; indices are float32 values, exact only for an axis of 1 to 2^24 elements");
  Shape out;
  for (int d = 0; d < x.rank; ++d) {
    if (d == ax && !a.keepdims) continue;
    out.dims[out.rank++] = d == ax ? 1 : x[d];
  }
  dst[0] = out;
  return Status::Ok();
}

}  // namespace vitrt
