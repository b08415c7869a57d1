// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Reading and writing NumPy .npy files (format versions 1-3, little-endian, C order).
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace vitrt {

struct NpyArray {
  std::string descr;  // numpy dtype string, e.g. "<f4"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // raw little-endian element bytes
};

Status read_npy(const std::string& path, NpyArray* out);
// Reads a float32 or float64 array as float32 (float64 is rounded).
Status read_npy_f32(const std::string& path, std::vector<float>* values, std::vector<int64_t>* shape);
// Reads a float64 array (float32 is widened).
Status read_npy_f64(const std::string& path, std::vector<double>* values, std::vector<int64_t>* shape);
Status write_npy_f32(const std::string& path, const float* values, const std::vector<int64_t>& shape);

}  // namespace vitrt
