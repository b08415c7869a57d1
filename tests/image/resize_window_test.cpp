// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// resize_pil_window against the window cut from a whole resize_pil (which tests/image/resize_test.cpp holds
// bit-exact to PIL), and the preprocessing (which resizes only the centre crop's window) against the whole
// resize followed by center_crop, on random images, sizes and windows, up and down, every filter.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "image/image.h"

using namespace vitrt;

namespace {

Image noise(int w, int h, int c, std::mt19937* rng) {
  Image img;
  img.width = w;
  img.height = h;
  img.channels = c;
  img.pixels.resize(static_cast<size_t>(w) * h * c);
  for (auto& p : img.pixels) p = static_cast<uint8_t>((*rng)() & 0xff);
  return img;
}

Image cut(const Image& src, const PixelWindow& win) {
  Image out;
  out.width = win.w;
  out.height = win.h;
  out.channels = src.channels;
  const size_t row = static_cast<size_t>(win.w) * src.channels;
  out.pixels.resize(row * win.h);
  for (int y = 0; y < win.h; ++y)
    std::memcpy(out.pixels.data() + y * row,
                src.pixels.data() + (static_cast<size_t>(win.y + y) * src.width + win.x) * src.channels, row);
  return out;
}

constexpr Interpolation kFilters[] = {Interpolation::kBilinear, Interpolation::kBicubic, Interpolation::kNearest};

}  // namespace

TEST_CASE("resize_pil_window gives the bits of the same window of resize_pil") {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> side(1, 40);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Image src = noise(side(rng), side(rng), trial % 2 ? 3 : 1, &rng);
    // Every fourth trial keeps one side unchanged: PIL then skips that pass, and so must the window.
    int out_w = side(rng), out_h = side(rng);
    if (trial % 4 == 1) out_w = src.width;
    if (trial % 4 == 2) out_h = src.height;
    const Interpolation interp = kFilters[trial % 3];
    Image whole;
    REQUIRE(resize_pil(src, out_w, out_h, interp, &whole).ok());
    const int w = std::uniform_int_distribution<int>(1, out_w)(rng);
    const int h = std::uniform_int_distribution<int>(1, out_h)(rng);
    const PixelWindow win{std::uniform_int_distribution<int>(0, out_w - w)(rng),
                          std::uniform_int_distribution<int>(0, out_h - h)(rng), w, h};
    CAPTURE(src.width);
    CAPTURE(src.height);
    CAPTURE(out_w);
    CAPTURE(out_h);
    CAPTURE(win.x);
    CAPTURE(win.y);
    CAPTURE(w);
    CAPTURE(h);
    CAPTURE(static_cast<int>(interp));
    Image part;
    REQUIRE(resize_pil_window(src, out_w, out_h, interp, win, &part).ok());
    const Image want = cut(whole, win);
    CHECK(part.width == want.width);
    CHECK(part.height == want.height);
    CHECK(part.pixels == want.pixels);
    ++checked;
  }
  CHECK(checked == 300);
}

TEST_CASE("resize_pil_window refuses windows outside the output") {
  std::mt19937 rng(1);
  const Image src = noise(8, 6, 3, &rng);
  Image dst;
  for (const PixelWindow& bad : {PixelWindow{0, 0, 0, 2}, PixelWindow{-1, 0, 2, 2}, PixelWindow{4, 0, 3, 2},
                                 PixelWindow{0, 4, 2, 2}, PixelWindow{0, 0, 7, 1}}) {
    const Status s = resize_pil_window(src, 6, 5, Interpolation::kBicubic, bad, &dst);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find("window") != std::string::npos);
  }
}

TEST_CASE("preprocess (window resize) equals resize_shorter_side then center_crop, padding included") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> side(1, 60);
  for (int trial = 0; trial < 200; ++trial) {
    const Image src = noise(side(rng), side(rng), 3, &rng);
    Preprocess pp;
    pp.channels = trial % 5 == 0 ? 1 : 3;
    pp.resize_shorter = std::uniform_int_distribution<int>(1, 30)(rng);
    pp.crop_w = std::uniform_int_distribution<int>(1, 40)(rng);  // may exceed the resized image: zero padding
    pp.crop_h = std::uniform_int_distribution<int>(1, 40)(rng);
    pp.interpolation = kFilters[trial % 3];
    pp.mean = {0.0f};
    pp.std = {1.0f / 255.0f};  // dst = round-trip of the 8-bit value: exact comparisons below
    CAPTURE(src.width);
    CAPTURE(src.height);
    CAPTURE(pp.resize_shorter);
    CAPTURE(pp.crop_w);
    CAPTURE(pp.crop_h);
    CAPTURE(static_cast<int>(pp.interpolation));
    Image base = src, resized, cropped;
    if (pp.channels == 1) REQUIRE(convert_to_gray(src, &base).ok());
    REQUIRE(resize_shorter_side(base, pp.resize_shorter, pp.interpolation, &resized).ok());
    REQUIRE(center_crop(resized, pp.crop_w, pp.crop_h, &cropped).ok());
    const size_t plane = static_cast<size_t>(pp.crop_w) * pp.crop_h;
    std::vector<float> got(plane * pp.channels, -1.0f);
    REQUIRE(preprocess_image(src, pp, got.data()).ok());
    std::vector<float> want(got.size());
    for (int ch = 0; ch < pp.channels; ++ch)
      for (size_t i = 0; i < plane; ++i)
        want[ch * plane + i] =
            (static_cast<float>(cropped.pixels[i * pp.channels + ch]) / 255.0f - 0.0f) / (1.0f / 255.0f);
    CHECK(got == want);
  }
}

TEST_CASE("preprocess of a long thin image computes only the crop: 12546x5 to shorter side 49, crop 37x9") {
  // The image that made this path: resizing all of it would be 122,950 x 49 = 6 M pixels for 333 kept. The
  // result must still be the whole-resize result.
  std::mt19937 rng(3);
  const Image src = noise(12546, 5, 3, &rng);
  Preprocess pp;
  pp.channels = 3;
  pp.resize_shorter = 49;
  pp.crop_w = 37;
  pp.crop_h = 9;
  pp.interpolation = Interpolation::kBicubic;
  pp.mean = {0.5f};
  pp.std = {0.25f};
  std::vector<float> got(3 * 37 * 9);
  REQUIRE(preprocess_image(src, pp, got.data()).ok());
  Image resized, cropped;
  REQUIRE(resize_shorter_side(src, 49, Interpolation::kBicubic, &resized).ok());
  CHECK(resized.width == 122950);
  REQUIRE(center_crop(resized, 37, 9, &cropped).ok());
  for (int ch = 0; ch < 3; ++ch)
    for (int i = 0; i < 37 * 9; ++i) {
      const float x = static_cast<float>(cropped.pixels[i * 3 + ch]) / 255.0f;
      CHECK(got[ch * 37 * 9 + i] == (x - 0.5f) / 0.25f);
    }
}
