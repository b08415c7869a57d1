// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The fuzz_regressions test: feeds every file of tests/fuzz/corpus/<target>/ and
// tests/fuzz/regressions/<target>/ to that target's entry point (built without libFuzzer, each renamed
// vitrt_fuzz_<target>), so every crash the fuzzers found stays fixed and the seeds keep working. A crash or a
// failed check ends the process: the last "replay" line names the input.
//   vitrt_fuzz_replay FUZZ_DIR             every target, every committed input
//   vitrt_fuzz_replay TARGET FILE...       the given files through one target
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define VITRT_FUZZ_DECLARE(name) extern "C" int vitrt_fuzz_##name(const uint8_t* data, size_t size);
#include "fuzz_targets.inc"  // generated: VITRT_FUZZ_TARGETS(X) lists the targets
VITRT_FUZZ_TARGETS(VITRT_FUZZ_DECLARE)

namespace {

namespace fs = std::filesystem;

struct Target {
  const char* name;
  int (*run)(const uint8_t*, size_t);
};
#define VITRT_FUZZ_ENTRY(name) {#name, vitrt_fuzz_##name},
const Target kTargets[] = {VITRT_FUZZ_TARGETS(VITRT_FUZZ_ENTRY)};

bool replay(const Target& t, const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", file.c_str());
    return false;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::printf("replay %-12s %s (%zu bytes)\n", t.name, file.c_str(), bytes.size());
  std::fflush(stdout);
  t.run(bytes.empty() ? nullptr : bytes.data(), bytes.size());
  return true;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FUZZ_DIR | %s TARGET FILE...\n", argv[0], argv[0]);
    return 1;
  }
  if (argc >= 3) {
    for (const Target& t : kTargets)
      if (std::strcmp(t.name, argv[1]) == 0) {
        for (int i = 2; i < argc; ++i)
          if (!replay(t, argv[i])) return 1;
        return 0;
      }
    std::fprintf(stderr, "unknown target '%s'\n", argv[1]);
    return 1;
  }
  const fs::path root = argv[1];
  size_t total = 0;
  bool ok = true;
  for (const Target& t : kTargets) {
    const auto corpus = files_in(root / "corpus" / t.name);
    if (corpus.empty()) {
      std::fprintf(stderr, "no seed corpus for target '%s' in %s\n", t.name, (root / "corpus").c_str());
      ok = false;
    }
    for (const auto* dir : {"corpus", "regressions"})
      for (const auto& f : files_in(root / dir / t.name)) {
        ok = replay(t, f) && ok;
        ++total;
      }
  }
  std::printf("%zu inputs replayed through %zu targets without a crash\n", total, std::size(kTargets));
  return ok ? 0 : 1;
}
