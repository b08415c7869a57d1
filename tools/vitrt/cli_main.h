// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The whole `vitrt` command line as a function, so that the Python package runs the same code in-process
// (`python3 -m vitrt classify ...`). It prints what the tool prints and returns its exit code; it never
// exits.

namespace vitrt::cli {

// argv[0] is the program name; argv[1] the subcommand.
int cli_main(int argc, char** argv);

}  // namespace vitrt::cli
