// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// vitrt-convert as a function: parses the command line (argv[0] the program name, then the checkpoint and the
// flags `vitrt-convert --help` lists), converts, and returns the exit code (0 ok, 1 usage, 2 bad checkpoint,
// 3 bad input file, 4 runtime failure). What the tool prints goes to `out` (the "wrote ..." line, --help) and
// `err` (progress notes and the error message); it never exits. The CLI (main.cpp) and the Python package
// (vitrt.convert) both call it.
#include <ostream>

namespace vitrt::convert {

int convert_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace vitrt::convert
