// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// One aligned host allocation, owned; freed with the session.
#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace vitrt {

class Arena {
 public:
  Arena() = default;
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Touches every page (zeroes it) unless `touch` is false: then the caller writes every byte it reads.
  Status allocate(size_t bytes, size_t alignment, const char* what, bool touch = true);
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace vitrt
