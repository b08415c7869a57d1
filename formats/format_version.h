// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The model file format version, tracked separately from the engine version (docs/format.md has the log).
#include <cstddef>
#include <cstdint>

namespace vitrt {

constexpr uint32_t kFormatVersion = 1;                  // what the writer produces
constexpr uint32_t kSupportedFormatVersions[] = {1};    // what the loader accepts
constexpr size_t kDataAlignment = 64;                   // every weight buffer starts on this boundary
constexpr char kFileIdentifier[] = "VTRT";

inline bool format_version_supported(uint32_t v) {
  for (uint32_t s : kSupportedFormatVersions)
    if (s == v) return true;
  return false;
}

}  // namespace vitrt
