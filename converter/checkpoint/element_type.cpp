// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "checkpoint/element_type.h"

#include <cstring>

namespace vitrt::convert {
namespace {

// A hard cap on one tensor's element count (64 GiB of float32: far beyond any vision checkpoint); the
// readers' ExpansionBudget (read_limits.h) is the real, file-size-bound limit.
constexpr int64_t kMaxElements = int64_t{1} << 34;

const ElementInfo kF32{ElementType::kF32, 4, "float32", DType::kFloat32};
const ElementInfo kF16{ElementType::kF16, 2, "float16", DType::kFloat16};
const ElementInfo kBF16{ElementType::kBF16, 2, "bfloat16", DType::kBFloat16};
const ElementInfo kF64{ElementType::kF64, 8, "float64", DType::kFloat32};
const ElementInfo kI64{ElementType::kI64, 8, "int64", DType::kInt64};
const ElementInfo kI32{ElementType::kI32, 4, "int32", DType::kInt32};
const ElementInfo kI16{ElementType::kI16, 2, "int16", DType::kInt32};
const ElementInfo kI8{ElementType::kI8, 1, "int8", DType::kInt8};
const ElementInfo kU8{ElementType::kU8, 1, "uint8", DType::kUInt8};
const ElementInfo kBool{ElementType::kBool, 1, "bool", DType::kUInt8};

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

float element(const uint8_t* p, ElementType t) {
  switch (t) {
    case ElementType::kF32:
      return load<float>(p);
    case ElementType::kF16:
      return half_to_float(load<uint16_t>(p));
    case ElementType::kBF16: {
      const uint32_t bits = static_cast<uint32_t>(load<uint16_t>(p)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case ElementType::kF64:
      return static_cast<float>(load<double>(p));
    case ElementType::kI64:
      return static_cast<float>(load<int64_t>(p));
    case ElementType::kI32:
      return static_cast<float>(load<int32_t>(p));
    case ElementType::kI16:
      return static_cast<float>(load<int16_t>(p));
    case ElementType::kI8:
      return static_cast<float>(load<int8_t>(p));
    case ElementType::kU8:
      return static_cast<float>(p[0]);
    case ElementType::kBool:
      return p[0] ? 1.0f : 0.0f;
  }
  return 0.0f;
}

}  // namespace

bool element_from_torch_storage(const std::string& s, ElementInfo* out) {
  if (s == "FloatStorage")
    *out = kF32;
  else if (s == "HalfStorage")
    *out = kF16;
  else if (s == "BFloat16Storage")
    *out = kBF16;
  else if (s == "DoubleStorage")
    *out = kF64;
  else if (s == "LongStorage")
    *out = kI64;
  else if (s == "IntStorage")
    *out = kI32;
  else if (s == "ShortStorage")
    *out = kI16;
  else if (s == "CharStorage")
    *out = kI8;
  else if (s == "ByteStorage" || s == "UntypedStorage")
    *out = kU8;
  else if (s == "BoolStorage")
    *out = kBool;
  else
    return false;
  return true;
}

bool element_from_safetensors(const std::string& c, ElementInfo* out) {
  if (c == "F32")
    *out = kF32;
  else if (c == "F16")
    *out = kF16;
  else if (c == "BF16")
    *out = kBF16;
  else if (c == "F64")
    *out = kF64;
  else if (c == "I64")
    *out = kI64;
  else if (c == "I32")
    *out = kI32;
  else if (c == "I16")
    *out = kI16;
  else if (c == "I8")
    *out = kI8;
  else if (c == "U8")
    *out = kU8;
  else if (c == "BOOL")
    *out = kBool;
  else
    return false;
  return true;
}

Status check_view(const StridedView& v, int64_t storage_numel, int64_t* numel, int64_t* end) {
  int64_t unused_end = 0;
  if (!end) end = &unused_end;
  *end = 0;
  if (v.size.size() != v.stride.size()) return bad_input("size and stride have different ranks");
  if (v.size.size() > 16) return bad_input("tensor rank " + std::to_string(v.size.size()) + " is too high");
  int64_t n = 1;
  for (int64_t s : v.size) {
    if (s < 0) return bad_input("negative dimension");
    if (s != 0 && n > kMaxElements / s) return bad_input("tensor has too many elements");
    n *= s;
  }
  *numel = n;
  if (v.offset < 0 || storage_numel < 0) return bad_input("negative storage offset");
  if (n == 0)
    return v.offset <= storage_numel ? Status::Ok() : bad_input("storage offset past the storage end");
  int64_t last = v.offset;  // index of the last element; every term checked against the storage size
  for (size_t k = 0; k < v.size.size(); ++k) {
    const int64_t st = v.stride[k];
    if (st < 0) return bad_input("negative stride");
    if (st != 0 && (v.size[k] - 1) > (storage_numel - last) / st)
      return bad_input("view (offset " + std::to_string(v.offset) +
                       ") reaches past the end of its storage (" + std::to_string(storage_numel) +
                       " elements)");
    last += (v.size[k] - 1) * st;
  }
  if (last >= storage_numel)
    return bad_input("view (offset " + std::to_string(v.offset) + ") reaches past the end of its storage (" +
                     std::to_string(storage_numel) + " elements)");
  *end = last + 1;
  return Status::Ok();
}

void gather_float32(const uint8_t* storage, const ElementInfo& elem, const StridedView& v, int64_t numel,
                    std::vector<float>* out) {
  out->resize(static_cast<size_t>(numel));
  if (numel == 0) return;
  const size_t rank = v.size.size();
  // Contiguous fast path.
  bool contiguous = true;
  int64_t expect = 1;
  for (size_t k = rank; k-- > 0;) {
    if (v.size[k] != 1 && v.stride[k] != expect) contiguous = false;
    expect *= v.size[k];
  }
  const uint8_t* base = storage + static_cast<size_t>(v.offset) * elem.size;
  float* dst = out->data();
  if (contiguous) {
    if (elem.type == ElementType::kF32) {
      std::memcpy(dst, base, static_cast<size_t>(numel) * 4);
    } else {
      for (int64_t i = 0; i < numel; ++i)
        dst[i] = element(base + static_cast<size_t>(i) * elem.size, elem.type);
    }
    return;
  }
  std::vector<int64_t> idx(rank, 0);
  int64_t pos = 0;  // storage index relative to the offset
  for (int64_t i = 0; i < numel; ++i) {
    dst[i] = element(base + static_cast<size_t>(pos) * elem.size, elem.type);
    for (size_t k = rank; k-- > 0;) {  // odometer increment
      if (++idx[k] < v.size[k]) {
        pos += v.stride[k];
        break;
      }
      pos -= (v.size[k] - 1) * v.stride[k];
      idx[k] = 0;
    }
  }
}

}  // namespace vitrt::convert
