// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Serialises an IR graph (with its constants and metadata) into a .vitrt file:
//   [size-prefixed flatbuffer "VTRT" | zero padding to 64 | data section of 64-byte aligned weights]
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace vitrt {

// Checks a written model file (e.g. loads it back through the engine's verifier) before it is put in place.
using ModelFileCheck = std::function<Status(const std::string& written_path)>;

// Ok when `path` does not exist or is a regular file: the check write_model_file makes, for callers that want
// to fail before the work of building a model.
Status check_model_output_path(const std::string& path);

// Writes to `path` through a new temporary file in the same directory (a unique name created with
// O_CREAT|O_EXCL|O_NOFOLLOW and mode 0666 less the umask, so a planted file or symlink is never written
// through), runs `check` on it when given, and only then renames it over `path`. Refuses (invalid_argument) a
// `path` that exists and is not a regular file: a symlink, directory, FIFO, socket or device is never
// replaced. Any failure removes the temporary and leaves `path` as it was; nothing else is ever removed.
// Streams the weights: memory use does not grow with the model. `check` runs once every byte of `graph` is in
// the file, and the graph is not read after it: a `check` may release the graph's constant data
// (vitrt-convert does, before mapping the file back).
Status write_model_file(const Graph& graph, const std::string& path, const ModelFileCheck& check = nullptr);

// The same bytes in memory (tests, small models).
Status write_model_memory(const Graph& graph, std::vector<uint8_t>* out);

}  // namespace vitrt
