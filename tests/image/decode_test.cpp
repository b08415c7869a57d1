// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Decoding vs PIL 9.4 Image.open().convert('RGB') / convert('L'), pixel for pixel; corrupt files.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

#include "image/image_test_util.h"

using namespace vitrt;
using namespace vitrt_image_test;

TEST_CASE("decode: every fixture image equals PIL's convert('RGB')") {
  REQUIRE_MESSAGE(manifest_present(),
                  "missing fixture " << fixture_dir() << " (run ctest -R fixture_image_cases)");
  const auto cases = manifest("decode");
  REQUIRE(cases.size() >= 20);
  for (const auto& c : cases) {
    CAPTURE(c[1]);
    Image img;
    Status s = decode_image(fixture_dir() + "/" + c[1], &img);
    REQUIRE_MESSAGE(s.ok(), s.message());
    CHECK(img.channels == 3);
    int md = 0;
    const std::string diff = compare_u8(img, fixture_dir() + "/" + c[2], &md);
    CHECK_MESSAGE(diff.empty(), c[1] << ": " << diff);
  }
}

TEST_CASE("decode: decode_image_memory equals decode_image") {
  REQUIRE(manifest_present());
  const std::string path = fixture_dir() + "/src/progressive_333x251.jpg";
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Image a, b;
  REQUIRE(decode_image(path, &a).ok());
  REQUIRE(decode_image_memory(bytes.data(), bytes.size(), "mem.jpg", &b).ok());
  CHECK(a.pixels == b.pixels);
  CHECK(a.width == 333);
  CHECK(a.height == 251);
}

TEST_CASE("decode: convert_to_gray equals PIL's convert('L')") {
  REQUIRE(manifest_present());
  for (const auto& c : manifest("gray")) {
    CAPTURE(c[1]);
    Image rgb, g;
    REQUIRE(decode_image(fixture_dir() + "/" + c[1], &rgb).ok());
    REQUIRE(convert_to_gray(rgb, &g).ok());
    CHECK(g.channels == 1);
    int md = 0;
    const std::string diff = compare_u8(g, fixture_dir() + "/" + c[2], &md);
    CHECK_MESSAGE(diff.empty(), c[1] << ": " << diff);
  }
}

TEST_CASE("decode: corrupt, truncated and empty files give bad_input naming the file") {
  REQUIRE(manifest_present());
  const auto cases = manifest("corrupt");
  REQUIRE(cases.size() >= 8);
  for (const auto& c : cases) {
    const std::string path = fixture_dir() + "/" + c[1];
    CAPTURE(path);
    Image img;
    img.width = 5;
    Status s = decode_image(path, &img);
    CHECK_FALSE(s.ok());
    CHECK(s.code() == StatusCode::kBadInput);
    CHECK_MESSAGE(s.message().find(path) != std::string::npos, s.message());
    CHECK(img.width == 0);  // no half-decoded image is left behind
    CHECK(img.pixels.empty());
    MESSAGE(c[1] << " -> " << s.message());
  }
}

TEST_CASE("decode: missing file and bad arguments") {
  Image img;
  Status s = decode_image("/nonexistent/dir/cat.png", &img);
  CHECK(s.code() == StatusCode::kIo);
  CHECK(s.message().find("/nonexistent/dir/cat.png") != std::string::npos);
  CHECK(decode_image("x.png", nullptr).code() == StatusCode::kInvalidArgument);
  CHECK(decode_image_memory(nullptr, 0, "empty.png", &img).code() == StatusCode::kBadInput);
  const uint8_t gif[] = {'G', 'I', 'F', '8', '9', 'a', 0, 0};
  s = decode_image_memory(gif, sizeof gif, "anim.gif", &img);
  CHECK(s.code() == StatusCode::kBadInput);
  CHECK(s.message().find("anim.gif") != std::string::npos);
  const uint8_t png_sig_only[] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
  CHECK(decode_image_memory(png_sig_only, sizeof png_sig_only, "sig.png", &img).code() ==
        StatusCode::kBadInput);
  const uint8_t jpeg_soi_only[] = {0xff, 0xd8, 0xff};
  CHECK(decode_image_memory(jpeg_soi_only, sizeof jpeg_soi_only, "soi.jpg", &img).code() ==
        StatusCode::kBadInput);
}
