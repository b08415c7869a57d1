// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Library errors as Python exceptions: one class per vitrt_status_t, defined in python/vitrt/errors.py so
// that they can be documented, pickled (the Dask workers send them back) and caught as their builtin bases.
#include "bindings.h"
#include "text.h"

namespace vitrt::python {

void bind_errors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const vitrt::api::Error& e) {
      // vitrt.errors is imported by vitrt/__init__.py before this module, so this is a dictionary look-up.
      py::object cls = py::module_::import("vitrt.errors").attr("error_class")(static_cast<int>(e.status()));
      // The message may quote a name from a hostile file that is not UTF-8: decoded with replacement, so
      // the caller still gets this class rather than a UnicodeDecodeError.
      PyErr_SetObject(cls.ptr(), text(e.what()).ptr());
    }
  });
  m.def(
      "exit_code", [](int status) { return vitrt_exit_code(static_cast<vitrt_status_t>(status)); },
      py::arg("status"), "The exit code the command-line tools report for a status code (vitrt_exit_code).");
}

}  // namespace vitrt::python
