// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt._convert: vitrt-convert in-process (converter/convert_command.h), for vitrt.convert() and
// `python3 -m vitrt convert`. A module of its own because it links the converter and a static copy of the
// engine (to verify what it writes); `import vitrt` does not load it until a conversion is asked for.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>

#include "convert_command.h"

namespace py = pybind11;

PYBIND11_MODULE(_convert, m) {
  m.doc() = "vitrt-convert in-process; use vitrt.convert().";
  m.def(
      "convert_command",
      [](const std::vector<std::string>& args) {
        std::vector<const char*> argv;
        for (const std::string& a : args) argv.push_back(a.c_str());
        std::ostringstream out, err;
        int rc = 0;
        {
          py::gil_scoped_release unlocked;
          rc = vitrt::convert::convert_command(static_cast<int>(argv.size()), argv.data(), out, err);
        }
        return py::make_tuple(rc, out.str(), err.str());
      },
      py::arg("argv"),
      "Runs vitrt-convert with argv (argv[0] the program name): (exit code, what it printed on stdout, on "
      "stderr).");
}
