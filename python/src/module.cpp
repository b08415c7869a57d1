// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt._vitrt: the extension module behind the `vitrt` package (python/vitrt/__init__.py re-exports it).
#include "bindings.h"

namespace vitrt::python {

std::string path_argument(const py::object& path, const char* what) {
  py::object p = path;
  if (!py::isinstance<py::str>(p) && py::hasattr(p, "__fspath__"))
    p = py::module_::import("os").attr("fspath")(p);
  if (!py::isinstance<py::str>(p))
    fail(VITRT_ERR_INVALID_ARGUMENT, std::string(what) + ": expected a str or os.PathLike path, got " +
                                         py::str(py::type::of(p).attr("__name__")).cast<std::string>());
  return p.cast<std::string>();
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
