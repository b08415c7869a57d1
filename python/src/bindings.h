// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The pieces of the vitrt._vitrt extension module: each file binds one part of the C++ API (vitrt.hpp) and
// registers it here. The binding stays thin: checks a Python caller can get wrong (dtype, rank, layout) and
// conversions to Python types; everything else is the library's.
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "vitrt.hpp"

namespace vitrt::python {

namespace py = pybind11;

// Turns vitrt::api::Error into the vitrt.errors class of its status code (python/vitrt/errors.py).
void bind_errors(py::module_& m);
void bind_model(py::module_& m);
void bind_session(py::module_& m);
void bind_cli(py::module_& m);

// A failure the binding itself finds (a wrong argument): raised as the class of `status`.
[[noreturn]] inline void fail(vitrt_status_t status, const std::string& message) {
  throw vitrt::api::Error(status, message);
}

// A loaded model shared by the Python Model object and every Session made from it (a Model may be used by
// any number of threads; the C API says so).
struct ModelHandle {
  std::string path;
  vitrt::api::Model model;
};
using ModelPtr = std::shared_ptr<ModelHandle>;

// A path argument: str (os.fsencode: surrogateescape), bytes or os.PathLike, as the bytes the OS sees;
// anything else raises vitrt.InvalidArgumentError naming `what`.
std::string path_argument(const py::object& path, const char* what);

}  // namespace vitrt::python
