// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Shared pieces of the `vitrt` subcommands: model/session set-up with exit codes, image listing, output.
#include <CLI/CLI.hpp>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/exit_codes.h"
#include "loader/model_loader.h"
#include "runtime/session.h"

namespace vitrt::cli {

// Options every running subcommand shares.
struct RunOptions {
  std::string model_path;
  std::string backend = "auto";
  int threads = 1;
  int batch = 8;
  int opt_level = 1;
  std::string disabled_passes;
  bool profile = false;  // per-step timing (vitrt bench --profile)
};

void add_run_options(CLI::App* app, RunOptions* o, bool batch_option = true);

// Prints "vitrt: <context>: <message>" on stderr and returns the exit code for the failure.
int report_error(const std::string& context, const Status& st, bool loading_model);

// Loads the model (exit code 2 on failure).
int load_model_or_report(const std::string& path, std::shared_ptr<const Model>* out);
int create_session_or_report(std::shared_ptr<const Model> model, const RunOptions& o, int64_t max_batch,
                             std::unique_ptr<Session>* out);

// Directory walks: at most this many levels below a directory named on the command line, and this many
// images.
constexpr int kMaxWalkDepth = 64;
constexpr size_t kMaxListedImages = size_t{1} << 24;

// What a directory walk has seen, by (device, inode), so that no directory is walked twice and no file is
// listed twice, whatever symlinks or hard links lead to it. One ImageWalk may span several collect_images
// calls.
struct ImageWalk {
  std::set<std::pair<uint64_t, uint64_t>> dirs, files;
  size_t count = 0;
};

// Expands files and directories into image files (.png .jpg .jpeg, any case): directories recursively, each
// one's files in sorted order, symlinks to directories not followed (a note says so), symlinks to files kept,
// non-regular files skipped, each file once. `walk` (optional) carries the seen sets across calls.
Status collect_images(const std::vector<std::string>& args, std::vector<std::string>* images,
                      ImageWalk* walk = nullptr);

// The input limits, for the subcommands' --help.
std::string input_limits_help();

// Writes a progress bar on stderr when it is a terminal, or a line every 10% otherwise.
class Progress {
 public:
  Progress(size_t total, const char* what);
  void update(size_t done);
  void finish();

 private:
  size_t total_;
  const char* what_;
  bool tty_;
  int last_decile_ = -1;
};

std::string json_escape(const std::string& s);
std::string format_bytes(uint64_t bytes);

// Subcommands: each registers itself on `app` and returns a runner.
using Runner = std::function<int()>;
Runner add_classify(CLI::App& app);
Runner add_run(CLI::App& app);
Runner add_preprocess(CLI::App& app);
Runner add_inspect(CLI::App& app);
Runner add_bench(CLI::App& app);
Runner add_eval(CLI::App& app);

}  // namespace vitrt::cli
