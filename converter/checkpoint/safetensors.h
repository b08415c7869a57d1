// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// .safetensors files: u64 little-endian header length, JSON header, then the tensor bytes.
#include <string>

#include "checkpoint/checkpoint.h"

namespace vitrt::convert {

Status load_safetensors(const std::string& path, Checkpoint* out);

}  // namespace vitrt::convert
