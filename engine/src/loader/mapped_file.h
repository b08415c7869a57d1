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
  // True for open()'s read-only private file map, false for borrow()'s caller memory.
  bool file_mapped() const { return owned_; }

  // Gives the whole pages inside [data, data + size) of a read-only private file map back to the kernel
  // (madvise MADV_DONTNEED): they leave the process's resident memory, and a later read maps them from the
  // file again (the page cache), so the bytes never change. Only for ConstantData::file_mapped bytes: on
  // anonymous memory the same call would zero them. A failure is ignored (the pages just stay resident).
  static void drop_pages(const void* data, size_t size);

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = false;
};

}  // namespace vitrt
