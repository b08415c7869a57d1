// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt._vitrt: the extension module behind the `vitrt` package (python/vitrt/__init__.py re-exports it).
#include "bindings.h"
#include "text.h"

namespace vitrt::python {

std::string path_argument(const py::object& path, const char* what) {
  std::string bytes;
  if (!fs_bytes(path, &bytes))
    fail(VITRT_ERR_INVALID_ARGUMENT,
         std::string(what) + ": expected a str, bytes or os.PathLike path, got " + type_name(path));
  // The C API takes a NUL-terminated path: "a.vitrt\0x" would open a.vitrt.
  if (bytes.find('\0') != std::string::npos)
    fail(VITRT_ERR_INVALID_ARGUMENT, std::string(what) + ": the path holds a NUL byte");
  return bytes;
}

}  // namespace vitrt::python

PYBIND11_MODULE(_vitrt, m) {
  using namespace vitrt::python;
  m.doc() = "vitrt's C++ API (libvitrt.so) for Python; use the `vitrt` package, which re-exports it.";
  m.attr("__version__") = vitrt::api::version();
  m.attr("format_version") = vitrt_format_version();
  bind_errors(m);
  bind_model(m);
  bind_session(m);
  bind_cli(m);
}
