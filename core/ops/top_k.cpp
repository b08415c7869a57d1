// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// TopK (ONNX TopK): the k largest or smallest elements along one axis and their indices, as float32 values
// (core/ir/op_attrs.h, TopKAttrs). Both outputs have the input's shape with the axis k long.
#include <string>

#include "ops/op_registry.h"

namespace vitrt {

Status infer_top_k(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<TopKAttrs>(node.attrs);
  const Shape& x = *src[0];
  int ax = 0;
  if (x.rank < 1 || !normalize_axis(a.axis, x.rank, &ax))
    return bad_model("TopK: axis " + std::to_string(a.axis) + " is out of range for input " + x.str());
  if (x[ax] > (int64_t{1} << 24))
    return bad_model("TopK: axis " + std::to_string(a.axis) + " of input " + x.str() +
                     " is longer than 2^24; indices are float32 values, exact only up to 2^24");
  if (a.k < 1 || a.k > x[ax])
    return bad_model("TopK: k " + std::to_string(a.k) + " is not in [1, " + std::to_string(x[ax]) +
                     "] for axis " + std::to_string(a.axis) + " of input " + x.str());
  Shape out = x;
  out.dims[ax] = a.k;
  dst[0] = out;
  dst[1] = out;
  return Status::Ok();
}

}  // namespace vitrt
