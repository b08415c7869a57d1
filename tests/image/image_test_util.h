// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Shared helpers of the image tests: fixture lookup, manifest parsing, .npy comparison.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/npy.h"
#include "image/image.h"

namespace vitrt_image_test {

inline std::string fixture_dir() {
  const char* d = std::getenv("VITRT_FIXTURE_DIR");
  return d ? std::string(d) + "/image_cases" : std::string();
}

// Manifest lines, split on tabs, of the given kind ("decode", "resize", ...).
inline std::vector<std::vector<std::string>> manifest(const std::string& kind) {
  std::vector<std::vector<std::string>> out;
  std::ifstream f(fixture_dir() + "/manifest.txt");
  std::string line;
  while (std::getline(f, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, '\t')) fields.push_back(field);
    if (!fields.empty() && fields[0] == kind) out.push_back(fields);
  }
  return out;
}

inline bool manifest_present() {
  return std::ifstream(fixture_dir() + "/manifest.txt").good();
}

inline vitrt::Interpolation parse_filter(const std::string& s) {
  if (s == "bilinear") return vitrt::Interpolation::kBilinear;
  if (s == "nearest") return vitrt::Interpolation::kNearest;
  return vitrt::Interpolation::kBicubic;
}

inline std::vector<float> parse_floats(const std::string& s) {
  std::vector<float> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(static_cast<float>(std::strtod(item.c_str(), nullptr)));
  return v;
}

// Compares an image with a uint8 .npy of shape HxW (channels 1) or HxWxC; returns "" when equal, else a
// description with the max abs difference and the number of differing samples.
inline std::string compare_u8(const vitrt::Image& img, const std::string& npy_path, int* max_diff) {
  *max_diff = -1;
  vitrt::NpyArray a;
  vitrt::Status s = vitrt::read_npy(npy_path, &a);
  if (!s.ok()) return "cannot read " + npy_path + ": " + s.message();
  const int64_t c = a.shape.size() == 3 ? a.shape[2] : 1;
  if (a.descr != "|u1" || a.shape.size() < 2 || a.shape[0] != img.height || a.shape[1] != img.width ||
      c != img.channels)
    return "shape/dtype mismatch: expected " + a.descr + " " +
           std::to_string(a.shape.size() >= 2 ? a.shape[1] : -1) + "x" +
           std::to_string(a.shape.size() >= 2 ? a.shape[0] : -1) + "x" + std::to_string(c) + ", got " +
           std::to_string(img.width) + "x" + std::to_string(img.height) + "x" + std::to_string(img.channels);
  int md = 0;
  size_t ndiff = 0, first = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    const int d = std::abs(static_cast<int>(a.data[i]) - static_cast<int>(img.pixels[i]));
    if (d > 0 && ndiff++ == 0) first = i;
    if (d > md) md = d;
  }
  *max_diff = md;
  if (ndiff == 0) return "";
  const size_t px = first / img.channels;
  return "max abs diff " + std::to_string(md) + " in " + std::to_string(ndiff) + " of " +
         std::to_string(a.data.size()) + " samples; first at x=" + std::to_string(px % img.width) +
         " y=" + std::to_string(px / img.width) + " (expected " + std::to_string(a.data[first]) + ", got " +
         std::to_string(img.pixels[first]) + ")";
}

}  // namespace vitrt_image_test
