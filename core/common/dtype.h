// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vitrt {

// Values match the `DType` enum of formats/schema/vitrt.fbs.
enum class DType : int8_t { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2, kInt32 = 3, kInt64 = 4, kUInt8 = 5, kInt8 = 6 };

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kUInt8: return 1;
    case DType::kInt8: return 1;
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
  }
  return "unknown";
}

inline bool dtype_valid(int v) { return v >= 0 && v <= 6; }

}  // namespace vitrt
