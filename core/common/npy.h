// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Reading and writing NumPy .npy files (format versions 1-3, little-endian, C order), and InputFile, the one
// way vitrt opens an untrusted input file (a tensor, an image) for reading.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace vitrt {

// The largest .npy file read_npy* accept (8 GiB: 14,000 preprocessed 224x224 RGB images). A .npy file must
// hold exactly the bytes its header declares, so every allocation is justified by the file's real size.
constexpr uint64_t kMaxNpyFileBytes = uint64_t{8} << 30;
// More dimensions than any tensor vitrt handles (NumPy's own limit is 64).
constexpr int kMaxNpyDims = 32;

// An untrusted input file opened for reading. open() never blocks (O_NONBLOCK: a FIFO or a device is refused,
// not waited on) and accepts only a regular file (symlinks to one are followed) of at most max_bytes bytes;
// every error names the path, what it is and the limit. `what` names the kind of input in messages ("image",
// ".npy file").
class InputFile {
 public:
  InputFile() = default;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  Status open(const std::string& path, const char* what, uint64_t max_bytes);
  // Reads exactly n bytes from the current position; a file that ends early (or shrank since open) is
  // kBadInput "truncated".
  Status read_exact(void* dst, uint64_t n);
  // OK when nothing follows the current position (the file did not grow since open()).
  Status expect_end();
  uint64_t size() const { return size_; }   // the size fstat reported at open()
  uint64_t offset() const { return pos_; }  // bytes read so far
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0, pos_ = 0;
  std::string path_, what_;
};

// Reads a whole untrusted file (InputFile rules) into *bytes. Allocation failure is kBadInput, not a throw.
Status read_input_file(const std::string& path, const char* what, uint64_t max_bytes,
                       std::vector<uint8_t>* bytes);

struct NpyArray {
  std::string descr;  // numpy dtype string, e.g. "<f4"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // raw little-endian element bytes
};

// Every reader refuses, before allocating anything for the data: a file above kMaxNpyFileBytes or not a
// regular file, a shape whose byte size overflows (or whose non-zero dims multiply past 2^62, also in an
// empty array), and a file whose size after the header is not exactly the
// declared byte size (truncated, or followed by bytes the header does not describe). Errors are kBadInput
// (kIo when the file cannot be opened) and name the file and the declared shape.
Status read_npy(const std::string& path, NpyArray* out);
// Reads a float32 or float64 array as float32 (float64 is rounded).
Status read_npy_f32(const std::string& path, std::vector<float>* values, std::vector<int64_t>* shape);
// Reads a float64 array (float32 is widened).
Status read_npy_f64(const std::string& path, std::vector<double>* values, std::vector<int64_t>* shape);
Status write_npy_f32(const std::string& path, const float* values, const std::vector<int64_t>& shape);

}  // namespace vitrt
