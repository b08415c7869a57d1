// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A 64-byte aligned float buffer a kernel owns from plan time (packed weights), for aligned vector loads.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace vitrt {
namespace x86 {

// `floats` rounded up to a whole number of 64-byte lines (16 floats): workspace slices carved at such offsets
// keep the 64-byte alignment of the workspace base.
inline int64_t round16(int64_t floats) {
  return (floats + 15) / 16 * 16;
}

class AlignedFloats {
 public:
  AlignedFloats() = default;
  explicit AlignedFloats(size_t n)
      : n_(n), p_(static_cast<float*>(std::aligned_alloc(64, bytes(n))), &std::free) {
    if (p_) std::memset(p_.get(), 0, bytes(n));
  }
  float* data() { return p_.get(); }
  const float* data() const { return p_.get(); }
  size_t size() const { return p_ ? n_ : 0; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  static size_t bytes(size_t n) { return (n * sizeof(float) + 63) / 64 * 64 + 64; }
  size_t n_ = 0;
  std::unique_ptr<float, decltype(&std::free)> p_{nullptr, &std::free};
};

}  // namespace x86
}  // namespace vitrt
