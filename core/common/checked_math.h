// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Checked integer arithmetic for every size computed from untrusted data (model files, checkpoints, tensor
// and image headers) and the limits those sizes must respect (docs/limits.md). A size that overflows or
// passes a limit is an error for the caller to report, never a wrapped value.
#include <cstdint>

namespace vitrt {

// The most elements one tensor may hold (16 GiB of float32). Shape inference refuses any tensor above it, so
// products of two dimensions of a valid tensor, or of a dimension and a 32-bit attribute, cannot overflow
// int64.
constexpr int64_t kMaxTensorElements = int64_t{1} << 32;

// Graph size limits of a model file: far above any vision transformer (a few thousand ops), low enough that
// planning a hostile graph (liveness and arena offsets are quadratic in the worst case) stays bounded.
constexpr int64_t kMaxGraphNodes = 65536;
constexpr int64_t kMaxGraphTensors = 262144;

inline bool checked_add(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
inline bool checked_sub(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_sub_overflow(a, b, out);
}
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
inline bool checked_add(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
inline bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

}  // namespace vitrt
