// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Slice [start, end) of one axis, Python semantics (negative counts from the end, clamped to the axis).
#include "ops/op_registry.h"

namespace vitrt {

Status infer_slice(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<SliceAttrs>(node.attrs);
  int axis;
  if (!normalize_axis(a.axis, src[0]->rank, &axis)) return bad_model("Slice: axis out of range for " + src[0]->str());
  const int64_t n = (*src[0])[axis];
  auto clamp = [n](int64_t v) {
    if (v < 0) v += n;
    return v < 0 ? 0 : (v > n ? n : v);
  };
  const int64_t start = clamp(a.start), end = clamp(a.end);
  if (end <= start) return bad_model("Slice: empty range on " + src[0]->str());
  dst[0] = *src[0];
  dst[0][axis] = end - start;
  return Status::Ok();
}

}  // namespace vitrt
