// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Geometric and colour transforms of the eval pipeline: PIL convert('L'), torchvision Resize(int),
// CenterCrop.
#include <cstdint>
#include <cstring>
#include <new>

#include "image/decoders.h"
#include "image/image.h"

namespace vitrt {

Status convert_to_gray(const Image& rgb, Image* out) {
  if (out == nullptr) return invalid_argument("convert_to_gray: null output image");
  VITRT_RETURN_IF_ERROR(image_internal::check_image(rgb, "convert_to_gray"));
  if (rgb.channels == 1) {
    if (out != &rgb) *out = rgb;
    return Status::Ok();
  }
  Image g;
  VITRT_RETURN_IF_ERROR(image_internal::allocate_image(rgb.width, rgb.height, 1, &g));
  const size_t n = static_cast<size_t>(rgb.width) * rgb.height;
  const uint8_t* p = rgb.pixels.data();
  for (size_t i = 0; i < n; ++i, p += 3) {
    // PIL's L24 luma (ITU-R 601-2 weights in 16-bit fixed point, rounded).
    const uint32_t l = p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u;
    g.pixels[i] = static_cast<uint8_t>(l >> 16);
  }
  *out = std::move(g);
  return Status::Ok();
}

Status shorter_side_size(const Image& src, int size, int* out_w, int* out_h) {
  VITRT_RETURN_IF_ERROR(image_internal::check_image(src, "resize_shorter_side"));
  if (size <= 0)
    return invalid_argument("resize_shorter_side: size must be positive, got " + std::to_string(size));
  // A shorter side whose square passes the pixel limit fits no image: the caller's argument is wrong. Past
  // this, an output too large comes from the image's aspect ratio and is a bad input.
  if (static_cast<int64_t>(size) * size > image_internal::kMaxPixels)
    return invalid_argument("resize_shorter_side: a shorter side of " + std::to_string(size) +
                            " gives at least " + image_internal::pixel_limit_message(size, size));
  const bool portrait = src.width <= src.height;  // torchvision: short, long = (w, h) if w <= h else (h, w)
  const int64_t shorter = portrait ? src.width : src.height;
  const int64_t longer = portrait ? src.height : src.width;
  // Python: int(size * long / short), true division of exact integers, then truncation. size is at most
  // sqrt(kMaxPixels) and longer at most kMaxPixels, so size * longer < 2^53 is exact in a double, and
  // new_long * size below cannot overflow.
  const double long_f =
      static_cast<double>(static_cast<int64_t>(size) * longer) / static_cast<double>(shorter);
  // An extreme aspect ratio makes the resized image huge before the crop: refuse it by the pixel limit (the
  // size a bad input gives; PIL would run out of memory or raise its decompression-bomb error).
  const int64_t new_long = static_cast<int64_t>(long_f);
  if (new_long > INT32_MAX || new_long * size > image_internal::kMaxPixels)
    return bad_input(
        "resizing the " + std::to_string(src.width) + "x" + std::to_string(src.height) +
        " image to shorter side " + std::to_string(size) + ": " +
        image_internal::pixel_limit_message(portrait ? size : new_long, portrait ? new_long : size));
  *out_w = portrait ? size : static_cast<int>(new_long);
  *out_h = portrait ? static_cast<int>(new_long) : size;
  return Status::Ok();
}

Status resize_shorter_side(const Image& src, int size, Interpolation interp, Image* dst) {
  if (dst == nullptr) return invalid_argument("resize_shorter_side: null output image");
  int new_w = 0, new_h = 0;
  VITRT_RETURN_IF_ERROR(shorter_side_size(src, size, &new_w, &new_h));
  return resize_pil(src, new_w, new_h, interp, dst);
}

void center_crop_origin(int width, int height, int crop_w, int crop_h, int* left, int* top) {
  // torchvision first pads a too-small side with zeros: left/top (crop - size) // 2, right/bottom the rest.
  const int pad_left = crop_w > width ? (crop_w - width) / 2 : 0;
  const int pad_top = crop_h > height ? (crop_h - height) / 2 : 0;
  const int padded_w = crop_w > width ? crop_w : width;
  const int padded_h = crop_h > height ? crop_h : height;
  // Then top/left = int(round((size - crop) / 2.0)), Python's round: halves go to the even integer.
  auto offset = [](int d) {
    int o = d / 2;
    if (d % 2 == 1 && o % 2 == 1) ++o;
    return o;
  };
  *top = offset(padded_h - crop_h) - pad_top;    // in source coordinates
  *left = offset(padded_w - crop_w) - pad_left;  // (negative where padding was added)
}

Status center_crop(const Image& src, int crop_w, int crop_h, Image* dst) {
  if (dst == nullptr) return invalid_argument("center_crop: null output image");
  VITRT_RETURN_IF_ERROR(image_internal::check_image(src, "center_crop"));
  if (crop_w <= 0 || crop_h <= 0)
    return invalid_argument("center_crop: crop size " + std::to_string(crop_w) + "x" +
                            std::to_string(crop_h) + " must be positive");
  int left = 0, top = 0;
  center_crop_origin(src.width, src.height, crop_w, crop_h, &left, &top);
  Image out;
  VITRT_RETURN_IF_ERROR(image_internal::allocate_image(crop_w, crop_h, src.channels, &out));
  const int c = src.channels;
  const int x0 = left < 0 ? -left : 0;                                   // first output column inside source
  const int x1 = src.width - left < crop_w ? src.width - left : crop_w;  // one past the last
  for (int y = 0; y < crop_h; ++y) {
    const int sy = y + top;
    if (sy < 0 || sy >= src.height || x1 <= x0) continue;  // zero row (already zero-filled)
    std::memcpy(out.pixels.data() + (static_cast<size_t>(y) * crop_w + x0) * c,
                src.pixels.data() + (static_cast<size_t>(sy) * src.width + (x0 + left)) * c,
                static_cast<size_t>(x1 - x0) * c);
  }
  *dst = std::move(out);
  return Status::Ok();
}

}  // namespace vitrt
