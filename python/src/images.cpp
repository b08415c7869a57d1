// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "images.h"

namespace vitrt::python {

ImageSource image_source(const py::handle& image, size_t index) {
  ImageSource s;
  if (py::isinstance<py::bytes>(image) || py::isinstance<py::bytearray>(image)) {
    s.data = py::reinterpret_steal<py::bytes>(PyBytes_FromObject(image.ptr()));  // a bytearray is copied
    if (!s.data) throw py::error_already_set();
    char* p = nullptr;
    Py_ssize_t n = 0;
    PyBytes_AsStringAndSize(s.data.ptr(), &p, &n);
    s.bytes = p;
    s.size = static_cast<size_t>(n);
    s.in_memory = true;
    s.name = "<bytes #" + std::to_string(index) + ">";
  } else {
    s.name = path_argument(py::reinterpret_borrow<py::object>(image), "image");
  }
  return s;
}

void preprocess(const vitrt::api::Model& model, const ImageSource& src, float* dst, size_t capacity) {
  namespace api = vitrt::api;
  if (src.in_memory)
    api::preprocess_image_memory(model, src.bytes, src.size, src.name, api::Span<float>(dst, capacity));
  else
    api::preprocess_image(model, src.name, api::Span<float>(dst, capacity));
}

}  // namespace vitrt::python
