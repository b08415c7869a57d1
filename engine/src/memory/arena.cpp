// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "memory/arena.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace vitrt {

Arena::~Arena() {
  std::free(data_);
}

Status Arena::allocate(size_t bytes, size_t alignment, const char* what, bool touch) {
  std::free(data_);
  data_ = nullptr;
  size_ = 0;
  if (bytes == 0) return Status::Ok();
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p)
    return out_of_memory(std::string("cannot allocate the ") + what + " arena (" + std::to_string(rounded) +
                         " bytes)");
  // Touch every page now, so the first run pays no page faults.
  if (touch) std::memset(p, 0, rounded);
  data_ = static_cast<uint8_t*>(p);
  size_ = rounded;
  return Status::Ok();
}

}  // namespace vitrt
