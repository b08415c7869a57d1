// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// preprocess_image / load_and_preprocess: the whole torchvision eval pipeline as the model's metadata
// describes it.
#include <algorithm>
#include <cstring>
#include <new>

#include "image/decoders.h"
#include "image/image.h"

namespace vitrt {
namespace {

Status check_preprocess(const Preprocess& pp) {
  if (pp.channels != 1 && pp.channels != 3)
    return invalid_argument("preprocess: channels must be 1 or 3, got " + std::to_string(pp.channels));
  if (pp.resize_shorter <= 0 || pp.crop_w <= 0 || pp.crop_h <= 0)
    return invalid_argument("preprocess: resize " + std::to_string(pp.resize_shorter) + " and crop " +
                            std::to_string(pp.crop_w) + "x" + std::to_string(pp.crop_h) +
                            " must be positive");
  const auto n_ok = [&](size_t n) { return n == 1 || n == static_cast<size_t>(pp.channels); };
  if (!n_ok(pp.mean.size()) || !n_ok(pp.std.size()))
    return invalid_argument("preprocess: mean/std need 1 or " + std::to_string(pp.channels) +
                            " values, got " + std::to_string(pp.mean.size()) + "/" +
                            std::to_string(pp.std.size()));
  for (float s : pp.std)
    if (!(s != 0.0f)) return invalid_argument("preprocess: std values must be non-zero");
  return Status::Ok();
}

Status preprocess_impl(const Image& img, const Preprocess& pp, float* dst) {
  Image a;
  const Image* src = &img;
  if (pp.channels == 1 && img.channels == 3) {  // PIL convert('L')
    VITRT_RETURN_IF_ERROR(convert_to_gray(img, &a));
    src = &a;
  } else if (pp.channels == 3 && img.channels == 1) {  // PIL convert('RGB') of an L image
    VITRT_RETURN_IF_ERROR(image_internal::allocate_image(img.width, img.height, 3, &a));
    for (size_t i = 0; i < img.pixels.size(); ++i)
      a.pixels[3 * i] = a.pixels[3 * i + 1] = a.pixels[3 * i + 2] = img.pixels[i];
    src = &a;
  }
  // Resize(shorter side) then CenterCrop, computing only the resized pixels the crop keeps (the same bits as
  // resizing the whole image first; a long thin image would otherwise cost its whole resized area).
  int resized_w = 0, resized_h = 0, left = 0, top = 0;
  VITRT_RETURN_IF_ERROR(shorter_side_size(*src, pp.resize_shorter, &resized_w, &resized_h));
  center_crop_origin(resized_w, resized_h, pp.crop_w, pp.crop_h, &left, &top);
  const int x0 = std::max(left, 0), x1 = std::min(left + pp.crop_w, resized_w);
  const int y0 = std::max(top, 0), y1 = std::min(top + pp.crop_h, resized_h);
  Image b;
  VITRT_RETURN_IF_ERROR(image_internal::allocate_image(pp.crop_w, pp.crop_h, src->channels, &b));  // zeros
  if (x1 > x0 && y1 > y0) {
    Image window;
    VITRT_RETURN_IF_ERROR(resize_pil_window(*src, resized_w, resized_h, pp.interpolation,
                                            PixelWindow{x0, y0, x1 - x0, y1 - y0}, &window));
    const size_t row = static_cast<size_t>(window.width) * window.channels;
    for (int y = 0; y < window.height; ++y)
      std::memcpy(
          b.pixels.data() + (static_cast<size_t>(y0 - top + y) * pp.crop_w + (x0 - left)) * b.channels,
          window.pixels.data() + y * row, row);
  }
  a = std::move(b);
  const int c = pp.channels;
  const size_t plane = static_cast<size_t>(pp.crop_w) * pp.crop_h;
  for (int ch = 0; ch < c; ++ch) {
    const float mean = pp.mean.size() == 1 ? pp.mean[0] : pp.mean[ch];
    const float sd = pp.std.size() == 1 ? pp.std[0] : pp.std[ch];
    float* out = dst + ch * plane;
    const uint8_t* in = a.pixels.data() + ch;
    for (size_t i = 0; i < plane; ++i) {
      // ToTensor: float32(v) / 255 (a true division, as torch does on CPU); Normalize: (x - mean) / std.
      const float x = static_cast<float>(in[i * c]) / 255.0f;
      out[i] = (x - mean) / sd;
    }
  }
  return Status::Ok();
}

}  // namespace

Status preprocess_image(const Image& img, const Preprocess& pp, float* dst) {
  if (dst == nullptr) return invalid_argument("preprocess: null output buffer");
  VITRT_RETURN_IF_ERROR(image_internal::check_image(img, "preprocess"));
  VITRT_RETURN_IF_ERROR(check_preprocess(pp));
  try {
    return preprocess_impl(img, pp, dst);
  } catch (const std::bad_alloc&) {  // sized by the image: a bad input, exit code 3 in the CLI
    return bad_input("preprocess: out of memory for a " + std::to_string(img.width) + "x" +
                     std::to_string(img.height) + " image");
  }
}

Status load_and_preprocess(const std::string& path, const Preprocess& pp, float* dst) {
  if (dst == nullptr) return invalid_argument("preprocess: null output buffer");
  VITRT_RETURN_IF_ERROR(check_preprocess(pp));
  Image img;
  VITRT_RETURN_IF_ERROR(decode_image(path, &img));
  return preprocess_image(img, pp, dst).with_context("preprocessing '" + path + "'");
}

}  // namespace vitrt
