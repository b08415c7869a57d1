// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// decode_image / decode_image_memory: reads the file and picks the decoder by magic bytes.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

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

Status allocate_image(int width, int height, int channels, Image* dst) {
  if (width <= 0 || height <= 0 || static_cast<int64_t>(width) * height > kMaxPixels)
    return invalid_argument("image size " + std::to_string(width) + "x" + std::to_string(height) +
                            " is empty or above the limit of " + std::to_string(kMaxPixels) + " pixels");
  try {
    dst->pixels.assign(static_cast<size_t>(width) * height * channels, 0);
  } catch (const std::bad_alloc&) {
    return out_of_memory("cannot allocate a " + std::to_string(width) + "x" + std::to_string(height) +
                         " image");
  }
  dst->width = width;
  dst->height = height;
  dst->channels = channels;
  return Status::Ok();
}

}  // namespace image_internal

namespace {

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};

Status read_file(const std::string& path, std::vector<uint8_t>* bytes) {
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return io_error("cannot open image '" + path + "': " + std::strerror(errno));
  try {
    uint8_t buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) bytes->insert(bytes->end(), buf, buf + n);
  } catch (const std::bad_alloc&) {
    return out_of_memory("image '" + path + "' does not fit in memory");
  }
  if (std::ferror(f.get())) return io_error("error reading image '" + path + "'");
  return Status::Ok();
}

}  // namespace

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
  VITRT_RETURN_IF_ERROR(read_file(path, &bytes));
  return decode_image_memory(bytes.data(), bytes.size(), path, out);
}

}  // namespace vitrt
