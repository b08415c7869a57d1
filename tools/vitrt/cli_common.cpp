// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "cli_common.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
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
  add_precision_option(app, &o->precision);
  app->add_option("--disable-pass", o->disabled_passes, "comma-separated planner passes to skip (or 'all')")
      ->envname("VITRT_DISABLE_PASSES");
  if (batch_option)
    app->add_option("--batch", o->batch, "images per run (the session is planned for this batch)")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
}

void add_precision_option(CLI::App* app, std::string* precision) {
  app->add_option(
         "--precision", *precision,
         "fp32 | bf16: bf16 runs Linear, the fused MLP's and attention's products and the later stages' "
         "channels-last convs with bf16 operands and fp32 sums where the CPU has AVX512-BF16 (else fp32, "
         "with "
         "a note; the run prints which ops); every other op stays fp32")
      ->capture_default_str()
      ->envname("VITRT_ARG_PRECISION");
}

int report_error(const std::string& context, const api::Error& e, bool loading_model) {
  std::cerr << "vitrt: " << context << ": " << e.what() << "\n";
  return loading_model ? VITRT_EXIT_BAD_MODEL : api::exit_code(e.status());
}

int load_model_or_report(const std::string& path, std::unique_ptr<api::Model>* out) {
  try {
    *out = std::make_unique<api::Model>(api::Model::load(path));
  } catch (const api::Error& e) {
    return report_error("cannot load model", e, true);
  }
  return VITRT_EXIT_OK;
}

int create_session_or_report(const api::Model& model, const RunOptions& o, int64_t max_batch,
                             std::unique_ptr<api::Session>* out) {
  try {
    api::SessionOptions so;
    so.backend = api::backend_from_name(o.backend);
    so.num_threads = o.threads;
    so.max_batch = static_cast<int32_t>(max_batch);
    so.opt_level = o.opt_level;
    so.disabled_passes = o.disabled_passes;
    so.profile = o.profile;
    so.preserve_intermediates = o.preserve_intermediates;
    so.precision = api::precision_from_name(o.precision);
    *out = std::make_unique<api::Session>(model, so);
    if (so.precision != VITRT_PRECISION_FP32)
      std::fprintf(stderr, "vitrt: precision %s\n", (*out)->precision().c_str());
  } catch (const api::Error& e) {
    return report_error("cannot create a session", e, false);
  }
  return VITRT_EXIT_OK;
}

std::vector<int64_t> output_shape_of_one(const api::Model& model) {
  std::vector<int64_t> one = model.info().output_dims;
  for (int64_t& d : one)
    if (d == -1) d = 1;
  return one;
}

size_t output_elements_per_image(const api::Model& model) {
  size_t n = 1;
  for (int64_t d : output_shape_of_one(model)) n *= static_cast<size_t>(d);
  return n;
}

namespace {

[[noreturn]] void fail(vitrt_status_t status, const std::string& message) {
  throw api::Error(status, message);
}

bool has_image_extension(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return false;
  std::string ext = name.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

// Walks `dir` (already stat'ed as a directory) in sorted order without following symlinks to directories.
// Symlinks to regular image files are listed; every file and directory is taken once, by (device, inode).
void walk(const std::string& dir, const struct stat& dir_st, int depth, ImageWalk* w,
          std::vector<std::string>* out) {
  if (!w->dirs.insert({dir_st.st_dev, dir_st.st_ino}).second) return;  // already walked
  if (depth > kMaxWalkDepth)
    fail(VITRT_ERR_BAD_INPUT, "directory '" + dir + "' is more than " + std::to_string(kMaxWalkDepth) +
                                  " levels deep (the limit of a directory walk)");
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) fail(VITRT_ERR_IO, "cannot read directory '" + dir + "': " + std::strerror(errno));
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
    errno = 0;
  }
  const int read_errno = errno;
  ::closedir(d);
  if (read_errno != 0)
    fail(VITRT_ERR_IO, "cannot read directory '" + dir + "': " + std::strerror(read_errno));
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = dir == "/" ? "/" + name : dir + "/" + name;
    struct stat lst;
    if (::lstat(path.c_str(), &lst) != 0) continue;  // vanished since readdir
    if (S_ISDIR(lst.st_mode)) {
      walk(path, lst, depth + 1, w, out);
      continue;
    }
    struct stat st = lst;
    if (S_ISLNK(lst.st_mode) && ::stat(path.c_str(), &st) != 0) continue;  // dangling link
    if (S_ISDIR(st.st_mode)) {
      std::fprintf(stderr, "vitrt: note: not following '%s', a symlink to a directory\n", path.c_str());
      continue;
    }
    // FIFOs, devices and sockets named *.png are not images (and opening a FIFO could block).
    if (!S_ISREG(st.st_mode) || !has_image_extension(name)) continue;
    if (!w->files.insert({st.st_dev, st.st_ino}).second) continue;  // the same file by another name
    if (w->count >= kMaxListedImages)
      fail(VITRT_ERR_BAD_INPUT,
           "more than " + std::to_string(kMaxListedImages) + " images under '" + dir + "'");
    ++w->count;
    out->push_back(path);
  }
}

}  // namespace

void collect_images(const std::vector<std::string>& args, std::vector<std::string>* images,
                    ImageWalk* walk_state) {
  ImageWalk local;
  ImageWalk* w = walk_state ? walk_state : &local;
  for (const std::string& a : args) {
    struct stat st;
    if (::stat(a.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      // A directory named on the command line is walked even through a symlink; nothing below it is.
      std::string dir = a;
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      std::vector<std::string> found;
      const bool seen = w->dirs.count({st.st_dev, st.st_ino}) != 0;
      walk(dir, st, 0, w, &found);
      std::sort(found.begin(), found.end());  // by full path, as before the walk was hand-written
      if (found.empty())
        fail(VITRT_ERR_BAD_INPUT, "directory '" + a + "' contains no .png/.jpg/.jpeg images" +
                                      (seen ? " (it was already walked under another name)" : ""));
      images->insert(images->end(), found.begin(), found.end());
    } else if (::stat(a.c_str(), &st) == 0 && !w->files.insert({st.st_dev, st.st_ino}).second) {
      continue;  // the same file named twice
    } else {
      images->push_back(a);  // a file: decoding reports it if it is missing or not a regular image file
    }
  }
}

std::string input_limits_help() {
  const vitrt_input_limits_t l = api::input_limits();
  char buf[1024];
  std::snprintf(
      buf, sizeof buf,
      "Input limits (a bad input, exit code 3, names the file and the limit):\n"
      "  images: regular files (not FIFOs or devices) of at most %llu MiB; at most %lld pixels (PIL's\n"
      "    decompression-bomb limit), also after the resize to the model's shorter side; PNG sides at most "
      "%u;\n"
      "    at most %llu MiB of decoder memory (progressive JPEG, interlaced PNG) and %d JPEG scans.\n"
      "  .npy tensors: regular files of at most %llu GiB, exactly the bytes their header declares.\n"
      "  directories: walked to %d levels, at most %zu images; symlinks to directories are not followed\n"
      "    and each file is taken once.\n",
      static_cast<unsigned long long>(l.max_image_file_bytes >> 20),
      static_cast<long long>(l.max_image_pixels), l.max_png_side,
      static_cast<unsigned long long>(l.max_image_decode_bytes >> 20), l.max_jpeg_scans,
      static_cast<unsigned long long>(l.max_npy_file_bytes >> 30), kMaxWalkDepth, kMaxListedImages);
  return buf;
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

void print_tiles(const api::Session& session) {
  const std::vector<api::TileInfo> tiles = session.tiles();
  if (tiles.empty()) return;
  std::printf("tiles:\n");
  for (const api::TileInfo& t : tiles) {
    if (t.kind == "batch")
      std::printf("  steps %d..%d: image by image at batch > 1\n", t.first_step, t.last_step);
    else if (t.kind == "trunk")
      std::printf(
          "  steps %d..%d: at batch > 1, %d threads side by side, each on its own images (up to %lld)\n",
          t.first_step, t.last_step, t.threads, static_cast<long long>(t.block));
    else
      std::printf("  steps %d..%d: %lld rows per block%s\n", t.first_step, t.last_step,
                  static_cast<long long>(t.block),
                  t.threads > 1 ? (", " + std::to_string(t.threads) + " blocks at once").c_str() : "");
  }
}

}  // namespace vitrt::cli
