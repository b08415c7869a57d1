// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt._convert: vitrt-convert in-process (converter/convert_command.h), for vitrt.convert() and
// `python3 -m vitrt convert`. A module of its own because it links the converter and a static copy of the
// engine (to verify what it writes); `import vitrt` does not load it until a conversion is asked for.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>

#include "../src/text.h"
#include "convert_command.h"

namespace py = pybind11;
using vitrt::python::text;

namespace {

// Raises vitrt.InvalidArgumentError (this module does not link _vitrt's exception translator).
[[noreturn]] void invalid_argument(const std::string& message) {
  py::object cls = py::module_::import("vitrt.errors").attr("InvalidArgumentError");
  PyErr_SetObject(cls.ptr(), text(message).ptr());
  throw py::error_already_set();
}

}  // namespace

PYBIND11_MODULE(_convert, m) {
  m.doc() = "vitrt-convert in-process; use vitrt.convert().";
  m.def(
      "convert_command",
      [](const py::sequence& argv_arg) {
        // Each argument as the OS's bytes: str via os.fsencode (a path listed by os.listdir may hold lone
        // surrogates), bytes as they are.
        if (py::isinstance<py::str>(argv_arg) || py::isinstance<py::bytes>(argv_arg))
          invalid_argument("convert_command: argv is a str, expected a list of arguments");
        std::vector<std::string> args;
        for (const py::handle& a : argv_arg) {
          std::string bytes;
          if (!vitrt::python::fs_bytes(a, &bytes))
            invalid_argument("convert_command: argv holds a " + vitrt::python::type_name(a) +
                             ", expected str, bytes or os.PathLike");
          args.push_back(bytes);
        }
        if (args.empty()) invalid_argument("convert_command: argv is empty, expected the program name first");
        std::vector<const char*> argv;
        for (const std::string& a : args) argv.push_back(a.c_str());
        std::ostringstream out, err;
        int rc = 0;
        {
          py::gil_scoped_release unlocked;
          rc = vitrt::convert::convert_command(static_cast<int>(argv.size()), argv.data(), out, err);
        }
        // The logs may quote checkpoint keys or names that are not UTF-8: replaced, so a successful
        // conversion never raises here.
        return py::make_tuple(rc, text(out.str()), text(err.str()));
      },
      py::arg("argv"),
      "Runs vitrt-convert with argv (argv[0] the program name; str, bytes or os.PathLike): (exit code, what "
      "it printed on stdout, on "
      "stderr).");
}
