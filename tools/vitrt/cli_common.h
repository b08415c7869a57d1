// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Shared pieces of the `vitrt` subcommands: model/session set-up with exit codes, image listing, progress.
// The CLI uses only the public API (vitrt.hpp over libvitrt.so); tools/checks/check_cli_headers.py checks it.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "output_format.h"
#include "vitrt.hpp"

namespace vitrt::cli {

namespace api = vitrt::api;

// Options every running subcommand shares.
struct RunOptions {
  std::string model_path;
  std::string backend = "auto";
  int threads = 1;
  int batch = 8;
  int opt_level = 1;
  std::string precision = "fp32";  // fp32 | bf16 (vitrt_precision_from_name checks it)
  std::string disabled_passes;
  bool profile = false;                 // per-step timing (vitrt bench --profile)
  bool preserve_intermediates = false;  // every tensor kept for a dump (vitrt run --dump-dir)
};

void add_run_options(CLI::App* app, RunOptions* o, bool batch_option = true);

// Prints "vitrt: <context>: <message>" on stderr and returns the exit code for the failure: a bad model
// (VITRT_EXIT_BAD_MODEL) for any failure while loading a model file, else vitrt_exit_code(status).
int report_error(const std::string& context, const api::Error& e, bool loading_model);

// Loads the model (exit code 2 on failure).
int load_model_or_report(const std::string& path, std::unique_ptr<api::Model>* out);
// Creates the session (exit code 1 for a bad option, 4 otherwise); with --precision other than fp32, notes on
// stderr what the session computes in (bf16 falls back to fp32 where it cannot run).
int create_session_or_report(const api::Model& model, const RunOptions& o, int64_t max_batch,
                             std::unique_ptr<api::Session>* out);
// The --precision option of run, classify, eval and bench.
void add_precision_option(CLI::App* app, std::string* precision);

// The model's output shape for a batch of one (its batch dimension, -1 in the file, set to 1).
std::vector<int64_t> output_shape_of_one(const api::Model& model);
// Elements of that shape: the floats one image's output takes.
size_t output_elements_per_image(const api::Model& model);

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
// non-regular files skipped, each file once. `walk` (optional) carries the seen sets across calls. Throws
// api::Error (VITRT_ERR_BAD_INPUT, or VITRT_ERR_IO for an unreadable directory) naming the directory.
void collect_images(const std::vector<std::string>& args, std::vector<std::string>* images,
                    ImageWalk* walk = nullptr);

// The input limits, for the subcommands' --help.
std::string input_limits_help();

// One line per tile of the session's plan (docs/architecture.md §6.1, §6.2): which steps run image by image
// or block of rows by block of rows, and how many per block. Nothing when there is none.
void print_tiles(const api::Session& session);

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

// Subcommands: each registers itself on `app` and returns a runner.
using Runner = std::function<int()>;
Runner add_classify(CLI::App& app);
Runner add_run(CLI::App& app);
Runner add_preprocess(CLI::App& app);
Runner add_inspect(CLI::App& app);
Runner add_bench(CLI::App& app);
Runner add_eval(CLI::App& app);

}  // namespace vitrt::cli
