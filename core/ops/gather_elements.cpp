// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// GatherElements (ONNX GatherElements): data [d0..dr-1] and indices of the same rank, each index a float32
// value along `axis` (core/ir/op_attrs.h, GatherElementsAttrs). The output has the indices' shape.
#include <string>

#include "ops/op_registry.h"

namespace vitrt {

Status infer_gather_elements(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<GatherElementsAttrs>(node.attrs);
  const Shape &x = *src[0], &idx = *src[1];
  int ax = 0;
  if (x.rank < 1 || !normalize_axis(a.axis, x.rank, &ax))
    return bad_model("GatherElements: axis " + std::to_string(a.axis) + " is out of range for data " +
                     x.str());
  if (idx.rank != x.rank)
    return bad_model("GatherElements: indices " + idx.str() + " do not have the rank of data " + x.str());
  for (int d = 0; d < x.rank; ++d)
    if (d != ax && idx[d] > x[d])
      return bad_model("GatherElements: indices " + idx.str() + " are larger than data " + x.str() +
                       " on axis " + std::to_string(d) + ", which is not the gathered axis");
  // Indices are float32 values: exact for an axis of at most 2^24 elements.
  if (x[ax] > (int64_t{1} << 24))
    return bad_model("GatherElements: the gathered axis of data " + x.str() +
                     " is longer than 2^24, beyond exact float32 indices");
  dst[0] = idx;
  return Status::Ok();
}

}  // namespace vitrt
