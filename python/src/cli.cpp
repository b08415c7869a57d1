// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The `vitrt` command line in-process, for `python3 -m vitrt classify|run|bench|...`
// (python/vitrt/__main__.py): the CLI's own code (tools/vitrt/cli_main.h), not a re-implementation.
#include <pybind11/stl.h>

#include <cstdio>
#include <iostream>

#include "bindings.h"
#include "cli_main.h"

namespace vitrt::python {

void bind_cli(py::module_& m) {
  m.def(
      "_cli_main",
      [](const std::vector<std::string>& args) {
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
