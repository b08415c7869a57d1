// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// `vitrt`: classify images, run tensors, preprocess, inspect and benchmark models.
#include "cli_main.h"

#include <iostream>

#include "cli_common.h"

namespace vitrt::cli {

int cli_main(int argc, char** argv) {
  CLI::App app{
      "vitrt: inference for efficient vision transformers.\n"
      "Exit codes: 0 ok, 1 usage, 2 bad model file, 3 bad input, 4 runtime failure."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "vitrt 0.1.0");
  std::vector<std::pair<CLI::App*, Runner>> commands;
  auto reg = [&](Runner (*add)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    Runner r = add(app);
    commands.emplace_back(app.get_subcommands({})[before], std::move(r));
  };
  reg(add_classify);
  reg(add_run);
  reg(add_preprocess);
  reg(add_inspect);
  reg(add_bench);
  reg(add_eval);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? VITRT_EXIT_OK : VITRT_EXIT_USAGE;
  }
  try {
    for (auto& [sub, run] : commands)
      if (sub->parsed()) return run();
  } catch (const std::exception& e) {
    std::cerr << "vitrt: internal error: " << e.what() << "\n";
    return VITRT_EXIT_RUNTIME;
  }
  return VITRT_EXIT_USAGE;
}

}  // namespace vitrt::cli
