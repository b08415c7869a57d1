// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A dimension or shape value known at import: c + k·B, where B is the batch (the one dimension that stays
// dynamic). Shape arithmetic in exported graphs (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) folds to
// such values; k is 0 for every dimension the importer resolves statically.
#include <cstdint>
#include <string>

#include "common/checked_math.h"

namespace vitrt::convert {

struct SymDim {
  int64_t c = 0;  // constant part
  int64_t k = 0;  // multiple of the batch

  static SymDim of(int64_t v) { return SymDim{v, 0}; }
  static SymDim batch(int64_t k = 1) { return SymDim{0, k}; }
  bool is_static() const { return k == 0; }
  bool operator==(const SymDim& o) const { return c == o.c && k == o.k; }
  bool operator!=(const SymDim& o) const { return !(*this == o); }
  // The value at a given batch size (for shapes at batch 1 and 2); at() only for values known to be small
  // (activation dims), at_checked() for anything a file declares.
  int64_t at(int64_t b) const { return c + k * b; }
  bool at_checked(int64_t b, int64_t* out) const {
    int64_t kb;
    return checked_mul(k, b, &kb) && checked_add(c, kb, out);
  }
  std::string str() const {
    if (k == 0) return std::to_string(c);
    std::string s = (k == 1 ? std::string("B") : std::to_string(k) + "B");
    if (c) s += (c > 0 ? "+" : "") + std::to_string(c);
    return s;
  }
};

}  // namespace vitrt::convert
