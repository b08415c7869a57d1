// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "file_checksum.h"

#include <zlib.h>

#include <algorithm>

#include "vitrt_generated.h"

namespace vitrt {
namespace {

uint32_t crc_bytes(uint32_t crc, const uint8_t* p, size_t n) {
  // zlib takes uInt lengths: feed large ranges in chunks.
  constexpr size_t kChunk = size_t{1} << 30;
  while (n > 0) {
    const size_t c = std::min(n, kChunk);
    crc = static_cast<uint32_t>(crc32(crc, p, static_cast<uInt>(c)));
    p += c;
    n -= c;
  }
  return crc;
}

}  // namespace

const uint8_t* crc32_field_address(const fb::Model* model) {
  // fb::Model privately derives from flatbuffers::Table and adds no state, so this view is the same object.
  return reinterpret_cast<const flatbuffers::Table*>(model)->GetAddressOf(fb::Model::VT_CRC32);
}

void FileChecksum::update(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const size_t begin = position_, end = position_ + size;
  const size_t f0 = field_offset_, f1 = field_offset_ + 4;
  if (end <= f0 || begin >= f1) {
    crc_ = crc_bytes(crc_, p, size);
  } else {
    static const uint8_t kZero[4] = {};
    const size_t a = f0 > begin ? f0 - begin : 0;             // bytes before the field
    const size_t z0 = std::max(begin, f0), z1 = std::min(end, f1);  // field bytes within this range
    crc_ = crc_bytes(crc_, p, a);
    crc_ = crc_bytes(crc_, kZero, z1 - z0);
    crc_ = crc_bytes(crc_, p + (z1 - begin), end - z1);
  }
  position_ = end;
}

}  // namespace vitrt
