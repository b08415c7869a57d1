// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What every checkpoint the readers accept must satisfy, whatever the file held (fuzz targets torch_zip,
// safetensors).
#include <cstdint>

#include "checkpoint/checkpoint.h"
#include "fuzz_util.h"

namespace vitrt::fuzz {

inline void check_checkpoint(const vitrt::convert::Checkpoint& ckpt) {
  for (const auto& kv : ckpt.tensors) {
    const auto& t = kv.second;
    uint64_t n = 1;
    for (int64_t d : t.shape) {
      VITRT_FUZZ_CHECK(d >= 0, "an accepted tensor has a negative dimension");
      n = d == 0 ? 0
                 : (n > UINT64_MAX / static_cast<uint64_t>(d) ? UINT64_MAX : n * static_cast<uint64_t>(d));
    }
    VITRT_FUZZ_CHECK(n == t.values.size(), "an accepted tensor's values do not match its shape");
    VITRT_FUZZ_CHECK(kv.first == t.name, "a tensor is filed under another name");
  }
}

}  // namespace vitrt::fuzz
