// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Image arguments of Model.preprocess and Session.classify: a path (str, os.PathLike) or the encoded bytes of
// a PNG/JPEG (bytes, bytearray), decoded and preprocessed by the engine exactly as `vitrt classify` does.
#include <string>

#include "bindings.h"

namespace vitrt::python {

struct ImageSource {
  std::string name;  // the path, or "<bytes #i>" for bytes
  py::bytes data;    // the encoded image, held while the GIL is released; empty for a path
  const char* bytes = nullptr;
  size_t size = 0;
  bool in_memory = false;
};

// Needs the GIL. `index` names bytes in messages.
ImageSource image_source(const py::handle& image, size_t index);

// Decodes and preprocesses into dst[0, C*H*W); callable without the GIL. Throws vitrt::api::Error.
void preprocess(const vitrt::api::Model& model, const ImageSource& src, float* dst, size_t capacity);

}  // namespace vitrt::python
