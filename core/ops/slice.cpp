// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Slice x[start:end:step] of one axis, Python semantics (core/ir/op_attrs.h, SliceAttrs). start, end and step
// come from files: the range is computed without overflow for any int64 values.
#include <cstdint>

#include "ops/op_registry.h"

namespace vitrt {

bool slice_range(int64_t n, const SliceAttrs& a, int64_t* first, int64_t* count) {
  if (n < 1 || a.step == 0 || a.step == INT64_MIN) return false;
  // Python's slice.indices: a negative bound counts from the end (v + n cannot overflow: v < 0 < n), then it
  // is clamped to [0, n] going forwards or to [-1, n-1] going backwards.
  const bool forward = a.step > 0;
  auto clamp = [&](int64_t v) {
    if (v < 0) v += n;
    const int64_t lo = forward ? 0 : -1, hi = forward ? n : n - 1;
    return v < lo ? lo : (v > hi ? hi : v);
  };
  const int64_t start = clamp(a.start), end = clamp(a.end);
  // |end - start| <= n + 1: no overflow; ceil(span / |step|) without adding |step| - 1.
  const int64_t span = forward ? end - start : start - end;
  if (span <= 0) return false;
  const int64_t stride = forward ? a.step : -a.step;
  *first = start;
  *count = (span - 1) / stride + 1;
  return true;
}

Status infer_slice(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<SliceAttrs>(node.attrs);
  int axis;
  if (!normalize_axis(a.axis, src[0]->rank, &axis))
    return bad_model("Slice: axis " + std::to_string(a.axis) + " out of range for " + src[0]->str());
  if (a.step == 0 || a.step == INT64_MIN)
    return bad_model("Slice: step " + std::to_string(a.step) + " (must be non-zero and above INT64_MIN)");
  if (a.step != 1 && node.version < 2)
    return bad_model("Slice: step " + std::to_string(a.step) + " needs op version 2 (version " +
                     std::to_string(node.version) + " has step 1 only)");
  int64_t first = 0, count = 0;
  if (!slice_range((*src[0])[axis], a, &first, &count))
    return bad_model("Slice: empty range [" + std::to_string(a.start) + ":" + std::to_string(a.end) + ":" +
                     std::to_string(a.step) + "] of axis " + std::to_string(axis) + " of " + src[0]->str());
  dst[0] = *src[0];
  dst[0][axis] = count;
  return Status::Ok();
}

}  // namespace vitrt
