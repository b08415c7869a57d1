// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "common/shape.h"

#include <limits>

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

}  // namespace vitrt
