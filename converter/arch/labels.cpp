// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Labels files (--labels): read with bounds, and matched against the model's class count.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include "arch/arch.h"
#include "checkpoint/read_limits.h"

namespace vitrt::convert {
namespace {

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};

Status read_labels(const std::string& path, std::vector<std::string>* labels) {
  const std::string what = "labels file '" + path + "'";
  uint64_t size = 0;
  Status st = regular_file_size(path, &size);  // never /dev/zero, a FIFO or a directory
  if (!st.ok())
    return st.code() == StatusCode::kIo ? io_error(what + ": " + st.message())
                                        : bad_input(what + ": " + st.message());
  if (size > kMaxLabelsFileBytes)
    return bad_input(what + " has " + std::to_string(size) + " bytes, more than the " +
                     std::to_string(kMaxLabelsFileBytes >> 20) + " MiB limit");
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return io_error("cannot read " + what + ": " + std::strerror(errno));
  // One byte more than the size checked above, to notice a file that grew since: never more than the limit.
  std::string text(static_cast<size_t>(size) + 1, '\0');
  const size_t n = std::fread(text.data(), 1, text.size(), f.get());
  if (std::ferror(f.get())) return io_error("cannot read " + what);
  if (n > size) return bad_input(what + " grew while it was read");
  text.resize(n);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > kMaxLabelBytes)
      return bad_input(what + ": line " + std::to_string(labels->size() + 1) + " has " +
                       std::to_string(line.size()) + " bytes, more than the " +
                       std::to_string(kMaxLabelBytes) + "-byte limit for a label");
    labels->push_back(std::move(line));
    start = end + 1;
  }
  while (!labels->empty() && labels->back().empty()) labels->pop_back();
  return Status::Ok();
}

}  // namespace

Status read_labels_file(const std::string& path, std::vector<std::string>* labels) {
  labels->clear();
  Status st;
  try {
    st = read_labels(path, labels);
  } catch (const std::bad_alloc&) {
    st = out_of_memory("out of memory while reading labels file '" + path + "'");
  }
  if (!st.ok()) labels->clear();
  return st;
}

Status apply_labels(std::vector<std::string> labels, const std::string& source, Graph* g) {
  int64_t classes = 0;
  if (!g->outputs.empty()) {
    const Shape& logits = g->tensors[g->outputs[0]].shape;
    if (logits.rank == 2) classes = logits[1];
  }
  if (static_cast<int64_t>(labels.size()) != classes)
    return bad_input(source + " has " + std::to_string(labels.size()) + " labels (lines) but the model has " +
                     std::to_string(classes) + " classes");
  g->metadata.labels = std::move(labels);
  return Status::Ok();
}

}  // namespace vitrt::convert
