// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "output_format.h"

#include <cstdio>

#include "vitrt.h"

namespace vitrt::cli {

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

std::string format_shape(const std::vector<int64_t>& dims) {
  std::string s = "[";
  if (dims.size() <= VITRT_MAX_RANK)
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i) s += ",";
      s += dims[i] == -1 ? std::string("B") : std::to_string(dims[i]);
    }
  return s + "]";
}

std::string format_floats(const std::vector<float>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "%s%g", i ? "," : "", v[i]);
    s += b;
  }
  return s;
}

}  // namespace vitrt::cli
