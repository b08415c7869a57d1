// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// resize_pil vs PIL 9.4 Image.resize, bit-exact; torchvision Resize(int) / CenterCrop geometry.
#include <doctest/doctest.h>

#include "image/image_test_util.h"

using namespace vitrt;
using namespace vitrt_image_test;

TEST_CASE("resize: bit-exact with PIL for bilinear, bicubic, nearest, down and up, RGB and L") {
  REQUIRE_MESSAGE(manifest_present(), "missing fixture " << fixture_dir());
  const auto cases = manifest("resize");
  REQUIRE(cases.size() >= 100);
  int worst = 0, checked = 0;
  for (const auto& c : cases) {
    const std::string what = c[1] + " " + c[2] + " -> " + c[3] + "x" + c[4] + " " + c[5];
    CAPTURE(what);
    Image src, dst;
    REQUIRE(decode_image(fixture_dir() + "/" + c[1], &src).ok());
    if (c[2] == "L") REQUIRE(convert_to_gray(src, &src).ok());
    Status s = resize_pil(src, std::stoi(c[3]), std::stoi(c[4]), parse_filter(c[5]), &dst);
    REQUIRE_MESSAGE(s.ok(), s.message());
    int md = 0;
    const std::string diff = compare_u8(dst, fixture_dir() + "/" + c[6], &md);
    CHECK_MESSAGE(diff.empty(), what << ": " << diff);
    worst = std::max(worst, md);
    ++checked;
  }
  MESSAGE("resize: " << checked << " cases, max abs difference vs PIL " << worst);
}

namespace {
Image ramp(int w, int h, int c) {
  Image img;
  img.width = w;
  img.height = h;
  img.channels = c;
  img.pixels.resize(static_cast<size_t>(w) * h * c);
  for (size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<uint8_t>(i * 7 + 1);
  return img;
}
}  // namespace

TEST_CASE("resize_shorter_side: torchvision Resize(int) output sizes") {
  struct Case {
    int w, h, size, ew, eh;
  } cases[] = {{333, 251, 256, 339, 256}, {251, 333, 256, 256, 339}, {500, 375, 248, 330, 248},
               {256, 256, 224, 224, 224}, {17, 9, 8, 15, 8},         {640, 480, 256, 341, 256}};
  for (const auto& k : cases) {
    CAPTURE(k.w);
    CAPTURE(k.h);
    Image dst;
    REQUIRE(resize_shorter_side(ramp(k.w, k.h, 3), k.size, Interpolation::kBilinear, &dst).ok());
    CHECK(dst.width == k.ew);
    CHECK(dst.height == k.eh);
  }
  Image src = ramp(300, 256, 1), dst;  // already the right size: unchanged
  REQUIRE(resize_shorter_side(src, 256, Interpolation::kBicubic, &dst).ok());
  CHECK(dst.pixels == src.pixels);
}

TEST_CASE("center_crop: banker's rounding of the offset and zero padding") {
  Image src = ramp(7, 6, 1), dst;
  // width 7 -> 4: (7-4)/2 = 1.5 -> 2; height 6 -> 1: 2.5 -> 2.
  REQUIRE(center_crop(src, 4, 1, &dst).ok());
  REQUIRE(dst.width == 4);
  for (int x = 0; x < 4; ++x) CHECK(dst.pixels[x] == src.pixels[2 * 7 + 2 + x]);
  // width 7 -> 6: 0.5 -> 0.
  REQUIRE(center_crop(src, 6, 6, &dst).ok());
  CHECK(dst.pixels[0] == src.pixels[0]);
  // Larger than the image: pad left (9-7)//2 = 1, right 1; top (9-6)//2 = 1, bottom 2.
  REQUIRE(center_crop(src, 9, 9, &dst).ok());
  CHECK(dst.pixels[0] == 0);
  CHECK(dst.pixels[1 * 9 + 1] == src.pixels[0]);
  CHECK(dst.pixels[6 * 9 + 7] == src.pixels[5 * 7 + 6]);
  CHECK(dst.pixels[7 * 9 + 7] == 0);
  CHECK(dst.pixels[6 * 9 + 8] == 0);
}

TEST_CASE("resize and crop reject bad arguments without crashing") {
  Image src = ramp(4, 4, 3), dst;
  CHECK(resize_pil(src, 0, 3, Interpolation::kBicubic, &dst).code() == StatusCode::kInvalidArgument);
  CHECK(resize_pil(src, 3, 3, static_cast<Interpolation>(9), &dst).code() == StatusCode::kInvalidArgument);
  CHECK(resize_pil(src, 3, 3, Interpolation::kBicubic, nullptr).code() == StatusCode::kInvalidArgument);
  Image broken = src;
  broken.pixels.pop_back();
  CHECK(resize_pil(broken, 3, 3, Interpolation::kBicubic, &dst).code() == StatusCode::kInvalidArgument);
  broken = src;
  broken.channels = 4;
  CHECK(center_crop(broken, 2, 2, &dst).code() == StatusCode::kInvalidArgument);
  CHECK(center_crop(src, 0, 2, &dst).code() == StatusCode::kInvalidArgument);
  CHECK(resize_shorter_side(src, -1, Interpolation::kBilinear, &dst).code() == StatusCode::kInvalidArgument);
  CHECK(resize_shorter_side(ramp(1, 4000, 1), 1000000, Interpolation::kBilinear, &dst).code() ==
        StatusCode::kInvalidArgument);
  // In place.
  REQUIRE(resize_pil(src, 9, 5, Interpolation::kBicubic, &src).ok());
  CHECK(src.width == 9);
  CHECK(src.pixels.size() == 9u * 5 * 3);
}
