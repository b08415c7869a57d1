// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A read-only memory map of a whole file. Weights are used in place from it (zero-copy).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace vitrt {

class MappedFile {
 public:
  static Status open(const std::string& path, std::shared_ptr<MappedFile>* out);
  // Wraps caller memory without copying; the caller keeps it alive and unchanged while in use.
  static std::shared_ptr<MappedFile> borrow(const void* data, size_t size);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = false;
};

}  // namespace vitrt
