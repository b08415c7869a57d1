// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Bytes <-> Python str for the binding. Library text (messages, labels, metadata, converter logs) may quote
// bytes from a hostile file that are not UTF-8: it is decoded with replacement characters, never raising.
// Paths are bytes to the OS: a str path is encoded as os.fsencode does (surrogateescape, so a name listed by
// os.listdir round-trips), and a path handed back is decoded as os.fsdecode does.
#include <pybind11/pybind11.h>

#include <string>

namespace vitrt::python {

namespace py = pybind11;

// Library text as str; invalid UTF-8 becomes U+FFFD.
inline py::str text(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

// A path's bytes as str, the way os.fsdecode gives them (undecodable bytes as lone surrogates).
inline py::str fs_text(const std::string& s) {
  PyObject* o = PyUnicode_DecodeFSDefaultAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

// str (os.fsencode), bytes or os.PathLike as the OS's bytes; nullptr-free. Returns false for another type.
inline bool fs_bytes(const py::handle& arg, std::string* dst) {
  py::object p = py::reinterpret_borrow<py::object>(arg);
  if (!py::isinstance<py::str>(p) && !py::isinstance<py::bytes>(p) && py::hasattr(p, "__fspath__"))
    p = py::module_::import("os").attr("fspath")(p);
  if (py::isinstance<py::str>(p)) p = py::module_::import("os").attr("fsencode")(p);
  if (!py::isinstance<py::bytes>(p)) return false;
  *dst = p.cast<std::string>();
  return true;
}

// The name of arg's type, for messages.
inline std::string type_name(const py::handle& arg) {
  return py::str(py::type::of(arg).attr("__name__")).cast<std::string>();
}

}  // namespace vitrt::python
