// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The full eval pipeline vs torchvision (or PIL + numpy float32 in torchvision's order): within 1e-6.
#include <doctest/doctest.h>

#include <cmath>

#include "image/image_test_util.h"

using namespace vitrt;
using namespace vitrt_image_test;

TEST_CASE("pipeline: load_and_preprocess equals Resize/CenterCrop/ToTensor/Normalize") {
  REQUIRE_MESSAGE(manifest_present(), "missing fixture " << fixture_dir());
  const auto cases = manifest("pipeline");
  REQUIRE(cases.size() >= 30);
  // Natural photos (Debian's python3-skimage, installed by tools/setup.sh): the 256->224 and 248->224 bicubic
  // pipelines of at least four of them.
  int photo_pipelines = 0;
  for (const auto& c : cases)
    photo_pipelines += c[1].find("skimage_") != std::string::npos && c[5] == "bicubic" && c[3] == "224";
  CHECK_MESSAGE(photo_pipelines >= 8, "only " << photo_pipelines
                                              << " natural-photo pipelines: is python3-skimage installed?");
  double worst = 0.0;
  for (const auto& c : cases) {
    const std::string what =
        c[1] + " resize " + c[2] + " crop " + c[3] + "x" + c[4] + " " + c[5] + " C=" + c[6];
    CAPTURE(what);
    Preprocess pp;
    pp.resize_shorter = std::stoi(c[2]);
    pp.crop_w = std::stoi(c[3]);
    pp.crop_h = std::stoi(c[4]);
    pp.interpolation = parse_filter(c[5]);
    pp.channels = std::stoi(c[6]);
    pp.mean = parse_floats(c[7]);
    pp.std = parse_floats(c[8]);
    std::vector<float> expected;
    std::vector<int64_t> shape;
    REQUIRE(read_npy_f32(fixture_dir() + "/" + c[9], &expected, &shape).ok());
    REQUIRE(shape == std::vector<int64_t>{pp.channels, pp.crop_h, pp.crop_w});
    std::vector<float> got(expected.size(), NAN);
    Status s = load_and_preprocess(fixture_dir() + "/" + c[1], pp, got.data());
    REQUIRE_MESSAGE(s.ok(), s.message());
    double md = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double d = std::fabs(static_cast<double>(got[i]) - expected[i]);
      if (!(d <= md)) md = d;  // NaN propagates
    }
    CHECK_MESSAGE(md <= 1e-6, what << ": max abs diff " << md);
    worst = std::max(worst, md);
  }
  MESSAGE("pipeline: " << cases.size() << " cases, max abs difference " << worst);
}

TEST_CASE("pipeline: bad preprocess settings and unreadable files") {
  Image img;
  img.width = img.height = 4;
  img.channels = 3;
  img.pixels.assign(48, 100);
  std::vector<float> out(3 * 224 * 224);
  Preprocess pp;
  CHECK(preprocess_image(img, pp, out.data()).ok());
  CHECK(preprocess_image(img, pp, nullptr).code() == StatusCode::kInvalidArgument);
  Preprocess bad = pp;
  bad.std = {0.2f, 0.0f, 0.2f};
  CHECK(preprocess_image(img, bad, out.data()).code() == StatusCode::kInvalidArgument);
  bad = pp;
  bad.mean = {0.1f, 0.2f};
  CHECK(preprocess_image(img, bad, out.data()).code() == StatusCode::kInvalidArgument);
  bad = pp;
  bad.channels = 2;
  CHECK(preprocess_image(img, bad, out.data()).code() == StatusCode::kInvalidArgument);
  bad = pp;
  bad.resize_shorter = 0;
  CHECK(preprocess_image(img, bad, out.data()).code() == StatusCode::kInvalidArgument);
  Status s = load_and_preprocess("/nonexistent.png", pp, out.data());
  CHECK(s.code() == StatusCode::kIo);
  if (manifest_present()) {
    const std::string path = fixture_dir() + "/bad/truncated.jpg";
    s = load_and_preprocess(path, pp, out.data());
    CHECK(s.code() == StatusCode::kBadInput);
    CHECK(s.message().find(path) != std::string::npos);
  }
  // Single mean/std value broadcast to every channel.
  Preprocess one = pp;
  one.mean = {0.5f};
  one.std = {0.5f};
  REQUIRE(preprocess_image(img, one, out.data()).ok());
  CHECK(out[0] == doctest::Approx((100.0f / 255.0f - 0.5f) / 0.5f));
  CHECK(out[2 * 224 * 224] == out[0]);
}

TEST_CASE("pipeline: a 1-channel Image gives what its RGB replication gives; RGB->L for 1-channel models") {
  Image l;
  l.width = 37;
  l.height = 23;
  l.channels = 1;
  for (int i = 0; i < 37 * 23; ++i) l.pixels.push_back(static_cast<uint8_t>((i * 37) ^ (i >> 3)));
  Image rgb;
  rgb.width = 37;
  rgb.height = 23;
  rgb.channels = 3;
  for (uint8_t v : l.pixels) rgb.pixels.insert(rgb.pixels.end(), {v, v, v});
  Preprocess pp;
  pp.resize_shorter = 20;
  pp.crop_w = pp.crop_h = 16;
  std::vector<float> a(3 * 16 * 16), b(3 * 16 * 16);
  REQUIRE(preprocess_image(l, pp, a.data()).ok());
  REQUIRE(preprocess_image(rgb, pp, b.data()).ok());
  CHECK(a == b);
  pp.channels = 1;
  pp.mean = {0.5f};
  pp.std = {0.25f};
  a.assign(16 * 16, 0.0f);
  b.assign(16 * 16, 0.0f);
  REQUIRE(preprocess_image(l, pp, a.data()).ok());
  REQUIRE(preprocess_image(rgb, pp, b.data()).ok());
  CHECK(a == b);
}
