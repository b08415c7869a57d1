// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The `vitrt` command line in-process, for `python3 -m vitrt classify|run|bench|...`
// (python/vitrt/__main__.py): the CLI's own code (tools/vitrt/cli_main.h), not a re-implementation.
#include <pybind11/stl.h>

#include <cstdio>
#include <iostream>

#include "bindings.h"
#include "cli_main.h"
#include "text.h"

namespace vitrt::python {

void bind_cli(py::module_& m) {
  m.def(
      "_cli_main",
      [](const py::sequence& argv_arg) {
        // Each argument as the OS's bytes (a path listed by os.listdir may hold lone surrogates).
        if (py::isinstance<py::str>(argv_arg) || py::isinstance<py::bytes>(argv_arg))
          fail(VITRT_ERR_INVALID_ARGUMENT, "_cli_main: argv is a str, expected a list of arguments");
        std::vector<std::string> args;
        for (const py::handle& a : argv_arg) {
          std::string bytes;
          if (!fs_bytes(a, &bytes))
            fail(VITRT_ERR_INVALID_ARGUMENT,
                 "_cli_main: argv holds a " + type_name(a) + ", expected str or bytes");
          args.push_back(bytes);
        }
        if (args.empty())
          fail(VITRT_ERR_INVALID_ARGUMENT, "_cli_main: argv is empty, expected the program name first");
        std::vector<const char*> argv;
        for (const std::string& a : args) argv.push_back(a.c_str());
        argv.push_back(nullptr);
        py::gil_scoped_release unlocked;
        const int rc = vitrt::cli::cli_main(static_cast<int>(args.size()), const_cast<char**>(argv.data()));
        std::cout.flush();  // the CLI writes with both printf and iostreams
        std::fflush(stdout);
        std::fflush(stderr);
        return rc;
      },
      py::arg("argv"), "Runs `vitrt` with argv (argv[0] the program name); returns its exit code.");
}

}  // namespace vitrt::python
