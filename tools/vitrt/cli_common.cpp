// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "cli_common.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace vitrt::cli {

void add_run_options(CLI::App* app, RunOptions* o, bool batch_option) {
  app->add_option("-m,--model", o->model_path, "model file (.vitrt)")->required();
  app->add_option("-b,--backend", o->backend, "auto | cpu | ref | cuda")
      ->capture_default_str()
      ->envname("VITRT_ARG_BACKEND");
  app->add_option("-t,--threads", o->threads, "CPU threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024))
      ->envname("VITRT_ARG_THREADS");
  app->add_option("--opt-level", o->opt_level, "0: run the graph as written; 1: planner passes (fusion)")
      ->capture_default_str()
      ->check(CLI::Range(0, 2));
  app->add_option("--disable-pass", o->disabled_passes, "comma-separated planner passes to skip (or 'all')")
      ->envname("VITRT_DISABLE_PASSES");
  if (batch_option)
    app->add_option("--batch", o->batch, "images per run (the session is planned for this batch)")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
}

int report_error(const std::string& context, const Status& st, bool loading_model) {
  std::cerr << "vitrt: " << context << ": " << st.message() << "\n";
  return exit_code_for(st, loading_model);
}

int load_model_or_report(const std::string& path, std::shared_ptr<const Model>* out) {
  Status st = load_model(path, out);
  if (!st.ok()) return report_error("cannot load model", st, true);
  return kExitOk;
}

int create_session_or_report(std::shared_ptr<const Model> model, const RunOptions& o, int64_t max_batch,
                             std::unique_ptr<Session>* out) {
  SessionOptions so;
  so.backend = o.backend;
  so.num_threads = o.threads;
  so.max_batch = max_batch;
  so.opt_level = o.opt_level;
  so.disabled_passes = o.disabled_passes;
  so.profile = o.profile;
  Status st = Session::create(std::move(model), so, out);
  if (!st.ok()) return report_error("cannot create a session", st, false);
  return kExitOk;
}

Status collect_images(const std::vector<std::string>& args, std::vector<std::string>* images) {
  namespace fs = std::filesystem;
  auto is_image = [](const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
  };
  for (const std::string& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(a, fs::directory_options::follow_directory_symlink, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && is_image(it->path())) found.push_back(it->path().string());
      if (ec) return io_error("cannot read directory '" + a + "': " + ec.message());
      std::sort(found.begin(), found.end());
      if (found.empty()) return bad_input("directory '" + a + "' contains no .png/.jpg/.jpeg images");
      images->insert(images->end(), found.begin(), found.end());
    } else {
      images->push_back(a);  // a file: decoding reports it if it is missing or not an image
    }
  }
  return Status::Ok();
}

Progress::Progress(size_t total, const char* what)
    : total_(total), what_(what), tty_(isatty(STDERR_FILENO)) {}

void Progress::update(size_t done) {
  if (total_ < 16) return;
  if (tty_) {
    const int width = 40;
    const int filled = static_cast<int>(width * done / total_);
    std::fprintf(stderr, "\r%s [%.*s%*s] %zu/%zu", what_, filled, "########################################",
                 width - filled, "", done, total_);
    std::fflush(stderr);
  } else {
    const int decile = static_cast<int>(10 * done / total_);
    if (decile != last_decile_) {
      std::fprintf(stderr, "%s: %zu/%zu\n", what_, done, total_);
      last_decile_ = decile;
    }
  }
}

void Progress::finish() {
  if (total_ >= 16 && tty_) std::fprintf(stderr, "\n");
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o;
}

std::string format_bytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 20))
    std::snprintf(buf, sizeof buf, "%.2f MiB", b / 1048576.0);
  else if (b >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

}  // namespace vitrt::cli
