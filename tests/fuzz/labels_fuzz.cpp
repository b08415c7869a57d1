// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fuzz target `labels`: labels file bytes -> vitrt-convert's labels reader (through convert_checkpoint on a
// tiny DeiT checkpoint with as many classes as the file has lines) -> model writer -> loader -> the CLI's
// JSON escaping. The `vitrt` CLI has no labels reader of its own: it prints the labels stored in the model.
// Checks that labels survive the round trip unchanged and that their JSON form parses back to them.
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "checkpoint/checkpoint.h"
#include "fuzz_util.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "output_format.h"
#include "tiny_deit.h"

namespace {

constexpr size_t kMaxClasses = 4096;

// Lines as a text reader sees them, trailing empty lines dropped: the class count the file is meant for.
size_t count_lines(const uint8_t* data, size_t size) {
  size_t lines = 0, last_nonempty = 0;
  size_t start = 0;
  for (size_t i = 0; i <= size; ++i) {
    if (i == size && start == size) break;
    if (i == size || data[i] == '\n') {
      ++lines;
      const size_t len = i - start - (i > start && data[i - 1] == '\r' ? 1 : 0);
      if (len) last_nonempty = lines;
      start = i + 1;
    }
  }
  return last_nonempty;
}

bool valid_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vitrt::fuzz::InputFile file("labels");
  const size_t classes = count_lines(data, size);
  if (classes == 0 || classes > kMaxClasses) return 0;
  const vitrt::convert::Checkpoint ckpt = vitrt::fuzz::tiny_deit(static_cast<int64_t>(classes));
  vitrt::convert::ConvertOptions opt;
  opt.arch = "deit";
  opt.heads = "1";
  opt.labels_path = file.write(data, size);
  vitrt::Graph g;
  std::string log;
  if (!vitrt::fuzz::step_ok("convert", vitrt::convert::convert_checkpoint(ckpt, opt, &g, &log))) return 0;
  VITRT_FUZZ_CHECK(g.metadata.labels.size() == classes, "converted model has a label count != its classes");

  std::vector<uint8_t> bytes;
  if (!vitrt::fuzz::step_ok("write", vitrt::write_model_memory(g, &bytes))) return 0;
  const size_t padded = (bytes.size() + 63) / 64 * 64;
  std::unique_ptr<uint8_t, decltype(&std::free)> buf(static_cast<uint8_t*>(std::aligned_alloc(64, padded)),
                                                     &std::free);
  std::memcpy(buf.get(), bytes.data(), bytes.size());
  std::shared_ptr<const vitrt::Model> model;
  VITRT_FUZZ_CHECK(vitrt::load_model_from_memory(buf.get(), bytes.size(), &model).ok(),
                   "a model written with these labels does not load");
  VITRT_FUZZ_CHECK(model->graph.metadata.labels == g.metadata.labels,
                   "labels changed through the model file");

  for (const std::string& label : model->graph.metadata.labels) {
    if (!valid_utf8(label)) continue;  // JSON cannot carry it as text either way
    const std::string quoted = "\"" + vitrt::cli::json_escape(label) + "\"";
    nlohmann::json back = nlohmann::json::parse(quoted, nullptr, false);
    VITRT_FUZZ_CHECK(!back.is_discarded() && back.is_string(), "json_escape made invalid JSON of a label");
    VITRT_FUZZ_CHECK(back.get<std::string>() == label, "json_escape changed a label");
  }
  return 0;
}
