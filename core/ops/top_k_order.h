// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The order TopK ranks the elements of one line in (core/ir/op_attrs.h, TopKAttrs), shared by the reference
// and x86 kernels so both select the same elements: by value (descending for largest, ascending otherwise),
// a NaN above every number (numpy.sort's place for it: first for largest, last for smallest), and equal
// values by the lower index first (ONNX's rule). A strict total order on indices 0..n-1.
#include <cstdint>

namespace vitrt {

struct TopKOrder {
  const float* line;  // element i at line[i·stride]
  int64_t stride;
  bool largest;
  bool operator()(int32_t a, int32_t b) const {
    const float va = line[a * stride], vb = line[b * stride];
    const bool na = va != va, nb = vb != vb;
    if (na || nb) {
      if (na && nb) return a < b;
      return largest ? na : nb;  // largest: a NaN first; smallest: a number before a NaN
    }
    if (va != vb) return largest ? va > vb : va < vb;
    return a < b;
  }
};

}  // namespace vitrt
