// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Shape: a fixed-capacity dimension list, so shapes can be recomputed during `run` without allocating.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace vitrt {

constexpr int kMaxRank = 8;
constexpr int64_t kDynamicDim = -1;  // the batch dimension of graph inputs and activations in a model file

struct Shape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};

  Shape() = default;
  Shape(std::initializer_list<int64_t> d) {
    for (int64_t v : d) dims[rank++] = v;
  }
  static bool from_vector(const std::vector<int64_t>& v, Shape* out) {
    if (v.size() > static_cast<size_t>(kMaxRank)) return false;
    out->rank = static_cast<int>(v.size());
    for (int i = 0; i < out->rank; ++i) out->dims[i] = v[i];
    return true;
  }
  std::vector<int64_t> to_vector() const { return std::vector<int64_t>(dims, dims + rank); }

  int64_t operator[](int i) const { return dims[i]; }
  int64_t& operator[](int i) { return dims[i]; }
  // Dimension counted from the end when i < 0, as in Python.
  int64_t dim(int i) const { return dims[i < 0 ? rank + i : i]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
  bool is_static() const {
    for (int i = 0; i < rank; ++i)
      if (dims[i] < 0) return false;
    return true;
  }
  bool operator==(const Shape& o) const {
    if (rank != o.rank) return false;
    for (int i = 0; i < rank; ++i)
      if (dims[i] != o.dims[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;  // "[1,197,192]"; -1 prints as "B"
};

// Product of dims with overflow detection; false on overflow or negative dims.
bool checked_numel(const Shape& s, int64_t* out);

// A shape an op may produce: rank 0..kMaxRank, every dimension >= 1, at most kMaxTensorElements elements
// (common/checked_math.h). Empty on success, else what is wrong ("dimension 2 is 0", "... elements exceed
// ...").
std::string shape_violation(const Shape& s);

}  // namespace vitrt
