// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Element types a checkpoint may store, and the strided gather that turns stored elements into float32.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"

namespace vitrt::convert {

enum class ElementType { kF32, kF16, kBF16, kF64, kI64, kI32, kI16, kI8, kU8, kBool };

struct ElementInfo {
  ElementType type;
  size_t size;       // bytes per element
  const char* name;  // float32, float16, ...
  DType dtype;       // closest vitrt DType (float64 -> float32, bool -> uint8, int16 -> int32)
};

// torch storage class names ("FloatStorage", ...). False for types the converter cannot read (complex,
// quantized).
bool element_from_torch_storage(const std::string& storage_type, ElementInfo* out);
// safetensors dtype codes ("F32", "BF16", ...).
bool element_from_safetensors(const std::string& code, ElementInfo* out);

// A strided view: element (i0, i1, ...) lives at storage index offset + sum(ik * stride[k]).
struct StridedView {
  int64_t offset = 0;
  std::vector<int64_t> size, stride;
};

// Checks that every element of `view` lies inside a storage of `storage_numel` elements and that the element
// count is at most 2^34; sets *numel and, when given, *end: one past the highest storage index the view reads
// (0 for an empty view), i.e. how much of the storage must be read. A view may hold more elements than its
// storage (stride 0, overlapping strides: a legitimate expand()); what that costs is the readers' to limit
// (read_limits.h).
Status check_view(const StridedView& view, int64_t storage_numel, int64_t* numel, int64_t* end = nullptr);

// Converts the (already checked) view of `storage` (raw little-endian bytes) into contiguous float32 values.
void gather_float32(const uint8_t* storage, const ElementInfo& elem, const StridedView& view, int64_t numel,
                    std::vector<float>* out);

}  // namespace vitrt::convert
