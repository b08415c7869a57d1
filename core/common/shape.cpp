// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "common/shape.h"

#include <limits>

#include "common/checked_math.h"

namespace vitrt {

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ",";
    s += dims[i] == kDynamicDim ? std::string("B") : std::to_string(dims[i]);
  }
  return s + "]";
}

bool checked_numel(const Shape& s, int64_t* out) {
  int64_t n = 1;
  for (int i = 0; i < s.rank; ++i) {
    int64_t d = s.dims[i];
    if (d < 0) return false;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return false;
    n *= d;
  }
  *out = n;
  return true;
}

std::string shape_violation(const Shape& s) {
  if (s.rank < 0 || s.rank > kMaxRank)
    return "rank " + std::to_string(s.rank) + " outside 0.." + std::to_string(kMaxRank);
  for (int i = 0; i < s.rank; ++i)
    if (s.dims[i] < 1) return "dimension " + std::to_string(i) + " of " + s.str() + " is not positive";
  int64_t n = 0;
  if (!checked_numel(s, &n) || n > kMaxTensorElements)
    return "shape " + s.str() + " holds more than " + std::to_string(kMaxTensorElements) +
           " elements (the per-tensor limit)";
  return std::string();
}

}  // namespace vitrt
