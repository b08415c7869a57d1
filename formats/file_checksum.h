// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The model file checksum: CRC-32 of the whole file with the Model.crc32 field's bytes read as zero.
#include <cstddef>
#include <cstdint>

namespace vitrt {

namespace fb {
struct Model;
}
// Address of the Model.crc32 field inside a verified buffer (nullptr if the field is not stored).
const uint8_t* crc32_field_address(const fb::Model* model);

class FileChecksum {
 public:
  // `field_offset`: file offset of the 4-byte crc32 field, whose bytes count as zero.
  explicit FileChecksum(size_t field_offset) : field_offset_(field_offset) {}
  // Feeds the next `size` bytes of the file (in order).
  void update(const void* data, size_t size);
  uint32_t value() const { return crc_; }

 private:
  size_t field_offset_;
  size_t position_ = 0;
  uint32_t crc_ = 0;
};

}  // namespace vitrt
