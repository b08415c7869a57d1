// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Internal: the per-format decoders behind decode_image_memory, and checks shared by the image files.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "image/image.h"

namespace vitrt {
namespace image_internal {

constexpr int64_t kMaxPixels = kMaxImagePixels;

// Both decoders produce RGB (channels 3) and name `name` in every error.
Status decode_png(const uint8_t* data, size_t size, const std::string& name, Image* out);
Status decode_jpeg(const uint8_t* data, size_t size, const std::string& name, Image* out);

// OK when img has positive dimensions, 1 or 3 channels and exactly width*height*channels pixels.
Status check_image(const Image& img, const char* what);

// Allocates dst->pixels. Sizes above kMaxImagePixels and std::bad_alloc are kBadInput (the sizes come from an
// image) naming the sizes; `what` prefixes the message.
Status allocate_image(int width, int height, int channels, Image* dst, const std::string& what = "image");

// The pixel-limit message shared by the decoders and the resize.
std::string pixel_limit_message(int64_t width, int64_t height);

}  // namespace image_internal
}  // namespace vitrt
