// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Helpers shared by the fuzz targets (tests/fuzz/*_fuzz.cpp). Each target is a libFuzzer entry point
// (LLVMFuzzerTestOneInput) built two ways: with -fsanitize=fuzzer by tools/fuzz.sh, and with g++ into the
// fuzz_regressions ctest, which replays the committed corpus and crash inputs through the same code.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace vitrt::fuzz {

// The fuzzed bytes as a file, for APIs that take a path: one memfd per process (a /dev/shm file where memfd
// is unavailable), rewritten with each input and opened by path through /proc/self/fd.
class InputFile {
 public:
  explicit InputFile(const char* tag) {
    fd_ = memfd_create(tag, 0);
    if (fd_ >= 0) {
      path_ = "/proc/self/fd/" + std::to_string(fd_);
    } else {
      path_ = "/dev/shm/vitrt-fuzz-" + std::string(tag) + "-" + std::to_string(getpid());
      fd_ = open_shm(path_);
    }
    if (fd_ < 0) {
      std::perror("vitrt fuzz: cannot create the input file");
      std::abort();  // the harness itself cannot run: not a finding
    }
  }
  ~InputFile() {
    close(fd_);
    if (path_.rfind("/dev/shm/", 0) == 0) unlink(path_.c_str());
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Replaces the file's contents with `size` bytes; returns its path.
  const std::string& write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  static int open_shm(const std::string& path) {
    return ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  }
  int fd_ = -1;
  std::string path_;
};

// With VITRT_FUZZ_VERBOSE set (replaying by hand), prints how far an input got: `step` and its error, if any.
// Returns st.ok() so targets can write `if (!step_ok("load", st)) return 0;`.
template <typename StatusT>
bool step_ok(const char* step, const StatusT& st) {
  static const bool verbose = std::getenv("VITRT_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "  %s: %s\n", step, st.ok() ? "ok" : st.message().c_str());
  return st.ok();
}

}  // namespace vitrt::fuzz

// A wrong answer the library returned without an error: stops the fuzzer (or the regression test) like a
// crash, with a message saying what was wrong.
#define VITRT_FUZZ_CHECK(cond, what)                                                            \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "vitrt fuzz: check failed: %s (%s:%d)\n", what, __FILE__, __LINE__); \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)
