// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Serialises an IR graph (with its constants and metadata) into a .vitrt file:
//   [size-prefixed flatbuffer "VTRT" | zero padding to 64 | data section of 64-byte aligned weights]
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace vitrt {

// Writes to `path` (through a temporary file renamed at the end, so a failed write never leaves a partial
// model behind). Streams the weights: memory use does not grow with the model.
Status write_model_file(const Graph& graph, const std::string& path);

// The same bytes in memory (tests, small models).
Status write_model_memory(const Graph& graph, std::vector<uint8_t>* out);

}  // namespace vitrt
