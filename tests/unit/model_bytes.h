// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Model files as bytes for loader tests: load them through the public loader (from a 64-byte aligned copy, as
// it requires) and edit a written header the way an attacker would, with the checksum stamped again so that
// the semantic checks, not the CRC, must catch the edit.
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "file_checksum.h"
#include "loader/model_loader.h"
#include "vitrt_generated.h"

namespace vitrt::test {

// Loads `b`; with `out`, the model (which keeps its aligned copy of the bytes alive) is returned too.
inline Status load_model_bytes(const std::vector<uint8_t>& b, std::shared_ptr<const Model>* out = nullptr) {
  const size_t cap = (b.size() + 63) / 64 * 64 + 64;
  std::shared_ptr<uint8_t> bytes(static_cast<uint8_t*>(std::aligned_alloc(64, cap)), std::free);
  if (!b.empty()) std::memcpy(bytes.get(), b.data(), b.size());
  std::shared_ptr<const Model> m;
  Status st = load_model_from_memory(bytes.get(), b.size(), &m);
  if (out && m) *out = std::shared_ptr<const Model>(m.get(), [m, bytes](const Model*) {});
  return st;
}

// Applies `edit` to the header of `b` through the mutable FlatBuffers API and re-stamps the checksum.
inline std::vector<uint8_t> edited_model_bytes(std::vector<uint8_t> b,
                                               const std::function<void(fb::Model*)>& edit) {
  fb::Model* m = fb::GetMutableSizePrefixedModel(b.data());
  edit(m);
  FileChecksum crc(static_cast<size_t>(crc32_field_address(m) - b.data()));
  crc.update(b.data(), b.size());
  m->mutate_crc32(crc.value());
  return b;
}

}  // namespace vitrt::test
