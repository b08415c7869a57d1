// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The loader: file -> verified model -> IR. It maps the file, checks the identifier, runs the FlatBuffers
// Verifier with explicit limits, then semantic checks (index ranges, buffer bounds and alignment, dtype x shape
// = bytes with overflow checks, known ops and versions, topological order, shape inference), and only then
// builds the IR. Every failure is a Status naming what is wrong; nothing asserts.
#include <memory>
#include <string>

#include "ir/graph.h"
#include "loader/mapped_file.h"

namespace vitrt {

// An immutable, verified model. Constants point into `file` (kept alive by it). Thread-safe to share.
struct Model {
  Graph graph;
  std::shared_ptr<MappedFile> file;
  std::string path;  // for messages; "<memory>" when loaded from caller memory
  uint32_t format_version = 0;
  uint64_t weight_bytes = 0;
};

Status load_model(const std::string& path, std::shared_ptr<const Model>* out);
// From caller memory (not copied): the memory must outlive the model and every session made from it.
Status load_model_from_memory(const void* data, size_t size, std::shared_ptr<const Model>* out);

}  // namespace vitrt
