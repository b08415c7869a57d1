// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// decode_image / decode_image_memory: reads the file and picks the decoder by magic bytes.
#include <cstring>
#include <new>
#include <vector>

#include "common/npy.h"
#include "image/decoders.h"
#include "image/image.h"

namespace vitrt {
namespace image_internal {

Status check_image(const Image& img, const char* what) {
  if (img.width <= 0 || img.height <= 0)
    return invalid_argument(std::string(what) + ": empty image (" + std::to_string(img.width) + "x" +
                            std::to_string(img.height) + ")");
  if (img.channels != 1 && img.channels != 3)
    return invalid_argument(std::string(what) + ": images must have 1 or 3 channels, got " +
                            std::to_string(img.channels));
  const size_t expected = static_cast<size_t>(img.width) * img.height * img.channels;
  if (img.pixels.size() != expected)
    return invalid_argument(std::string(what) + ": pixel buffer holds " + std::to_string(img.pixels.size()) +
                            " bytes, " + std::to_string(img.width) + "x" + std::to_string(img.height) + "x" +
                            std::to_string(img.channels) + " needs " + std::to_string(expected));
  return Status::Ok();
}

std::string pixel_limit_message(int64_t width, int64_t height) {
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (width <= 0 || height <= 0) return size + " is empty";
  int64_t pixels;
  const std::string count =
      __builtin_mul_overflow(width, height, &pixels) ? "more than 2^63" : std::to_string(pixels);
  return size + " (" + count + " pixels) exceeds the limit of " + std::to_string(kMaxPixels) +
         " pixels (PIL's decompression-bomb limit)";
}

Status allocate_image(int width, int height, int channels, Image* dst, const std::string& what) {
  // Both sides are positive ints, so the int64 product cannot overflow.
  if (width <= 0 || height <= 0 || static_cast<int64_t>(width) * height > kMaxPixels)
    return bad_input(what + ": image size " + pixel_limit_message(width, height));
  if (channels < 1 || channels > 4)
    return invalid_argument(what + ": " + std::to_string(channels) + " channels (1 to 4 expected)");
  const size_t bytes =
      static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(channels);
  try {
    dst->pixels.assign(bytes, 0);
  } catch (const std::bad_alloc&) {
    return bad_input(what + ": cannot allocate " + std::to_string(bytes) + " bytes for a " +
                     std::to_string(width) + "x" + std::to_string(height) + " image");
  }
  dst->width = width;
  dst->height = height;
  dst->channels = channels;
  return Status::Ok();
}

}  // namespace image_internal

Status decode_image_memory(const uint8_t* data, size_t size, const std::string& name_for_messages,
                           Image* out) {
  const std::string& name = name_for_messages;
  if (out == nullptr) return invalid_argument("decode_image: null output image");
  *out = Image();
  if (size == 0) return bad_input("image '" + name + "': file is empty");
  if (data == nullptr) return invalid_argument("image '" + name + "': null data pointer");
  static const uint8_t kPng[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
  Status s;
  if (size >= 8 && std::memcmp(data, kPng, 8) == 0) {
    s = image_internal::decode_png(data, size, name, out);
  } else if (size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff) {
    s = image_internal::decode_jpeg(data, size, name, out);
  } else {
    return bad_input("image '" + name + "': not a PNG or JPEG file (unrecognised leading bytes)");
  }
  if (!s.ok()) *out = Image();
  return s;
}

Status decode_image(const std::string& path, Image* out) {
  if (out == nullptr) return invalid_argument("decode_image: null output image");
  *out = Image();
  std::vector<uint8_t> bytes;
  VITRT_RETURN_IF_ERROR(read_input_file(path, "image", kMaxImageFileBytes, &bytes));
  return decode_image_memory(bytes.data(), bytes.size(), path, out);
}

}  // namespace vitrt
