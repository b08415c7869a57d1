// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fuzz target `image`: 4 parameter bytes + PNG/JPEG bytes -> decode_image_memory -> the eval preprocessing
// (resize shorter side, centre crop, normalise) with the parameters the first bytes choose:
//   byte 0: interpolation (mod 3), bit 7 grayscale; byte 1: resize_shorter 1..64; bytes 2, 3: crop h,
//   w 1..64.
// The image then goes through the file path too (load_and_preprocess), which must agree with memory decoding.
#include <cmath>
#include <vector>

#include "fuzz_util.h"
#include "image/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vitrt::fuzz::InputFile file("image");
  if (size < 4) return 0;
  vitrt::Preprocess pp;
  pp.interpolation = static_cast<vitrt::Interpolation>((data[0] & 0x7f) % 3);
  pp.channels = (data[0] & 0x80) ? 1 : 3;
  pp.resize_shorter = 1 + data[1] % 64;
  pp.crop_h = 1 + data[2] % 64;
  pp.crop_w = 1 + data[3] % 64;
  pp.mean.assign(pp.channels, 0.5f);
  pp.std.assign(pp.channels, 0.25f);
  data += 4;
  size -= 4;

  vitrt::Image img;
  if (!vitrt::fuzz::step_ok("decode", vitrt::decode_image_memory(data, size, "fuzz image", &img))) return 0;
  VITRT_FUZZ_CHECK(img.width > 0 && img.height > 0 && img.channels == 3, "decoded image has an odd geometry");
  VITRT_FUZZ_CHECK(img.pixels.size() == static_cast<size_t>(img.width) * img.height * 3,
                   "decoded image has the wrong number of pixels");
  const size_t n = static_cast<size_t>(pp.channels) * pp.crop_h * pp.crop_w;
  std::vector<float> a(n, NAN), b(n, NAN);
  const bool ok = vitrt::fuzz::step_ok("preprocess", vitrt::preprocess_image(img, pp, a.data()));
  if (ok)
    for (float v : a) VITRT_FUZZ_CHECK(std::isfinite(v), "preprocess left a non-finite value");
  // The same bytes through the file: same success, same values.
  const bool ok_file = vitrt::load_and_preprocess(file.write(data, size), pp, b.data()).ok();
  VITRT_FUZZ_CHECK(ok == ok_file, "file and memory decoding disagree on success");
  if (ok) VITRT_FUZZ_CHECK(a == b, "file and memory decoding give different values");
  return 0;
}
