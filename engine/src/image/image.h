// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Image decoding and evaluation preprocessing that reproduces PIL 9.4 + torchvision bit for bit:
//   decode (PIL Image.open + convert('RGB')) -> optional convert('L') -> Resize(int) -> CenterCrop ->
//   ToTensor -> Normalize. EXIF orientation is never applied: neither PIL's open/convert nor the
//   timm/torchvision eval pipelines apply it, so a rotated photo reaches the model exactly as stored in the
//   file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"

namespace vitrt {

// Limits on untrusted images (the CLI's --help repeats them). Each is checked before the memory it bounds is
// allocated, and passing one is a kBadInput error that names the image, its sizes and the limit.
// - Pixels: PIL refuses images above 2 * Image.MAX_IMAGE_PIXELS (its decompression-bomb error); so do we, for
//   decoded images and for the intermediate image of the resize (an extreme aspect ratio resized to the
//   model's shorter side can pass it: 1x1,000,000 to 224 would be 224x224,000,000).
constexpr int64_t kMaxImagePixels = 2 * 89478485LL;
// - Image file size: larger files are refused before they are read (a 13000x13000 RGB PNG of noise is ~500
// MB).
constexpr uint64_t kMaxImageFileBytes = uint64_t{1} << 30;
// - Decoder working memory: libjpeg's buffers (a progressive JPEG keeps all its coefficients, 2 bytes per
// sample)
//   and the whole-image buffer of an interlaced PNG (up to 8 bytes per pixel for 16-bit RGBA). Non-interlaced
//   PNGs and sequential JPEGs are decoded row by row and need no such buffer.
constexpr uint64_t kMaxImageDecodeBytes = uint64_t{1} << 30;
// - JPEG scans: a progressive JPEG may hold any number of scans, each a pass over the whole image; more than
//   this many is a denial of service, not a photo.
constexpr int kMaxJpegScans = 1000;
// - PNG sides: libpng's default limit, set explicitly (a row buffer is sized by the width).
constexpr uint32_t kMaxPngSide = 1000000;

// An 8-bit image, HWC, rows top to bottom. channels: 1 (PIL mode "L") or 3 ("RGB").
struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

// Decodes a PNG or JPEG (chosen by magic bytes, not by extension) to RGB with PIL's convert('RGB') semantics.
// Unreadable files give kIo; corrupt, truncated or unsupported data, a file that is not a regular file (a
// FIFO, a device, a directory: refused without blocking) and any of the limits above give kBadInput; all name
// the file. A file whose data cannot hold the pixels its header declares is refused before the image is
// allocated.
Status decode_image(const std::string& path, Image* out);
Status decode_image_memory(const uint8_t* data, size_t size, const std::string& name_for_messages,
                           Image* out);

// PIL convert('L') of an RGB image: (R*19595 + G*38470 + B*7471 + 0x8000) >> 16. A 1-channel input is copied.
Status convert_to_gray(const Image& rgb, Image* out);

// Bit-exact PIL Image.resize((out_w, out_h), filter) for modes L and RGB (Pillow's libImaging/Resample.c
// algorithm for bilinear/bicubic, its affine nearest-neighbour scaler for nearest).
Status resize_pil(const Image& src, int out_w, int out_h, Interpolation interp, Image* dst);

// Columns [x, x + w) and rows [y, y + h) of an image.
struct PixelWindow {
  int x = 0, y = 0, w = 0, h = 0;
};

// The window of resize_pil(src, out_w, out_h, interp) (w x h pixels, the same bits), computing only what the
// window needs: the preprocessing resizes just the part its centre crop keeps, so a 12546x5 image resized to
// shorter side 49 and cropped to 37x9 costs 37x9 output pixels, not 6 million. The window must lie inside
// out_w x out_h.
Status resize_pil_window(const Image& src, int out_w, int out_h, Interpolation interp,
                         const PixelWindow& window, Image* dst);

// torchvision transforms.Resize(size) with an int: the shorter side becomes `size`, the longer
// int(size * long / short); an image already of that size is copied unchanged.
Status resize_shorter_side(const Image& src, int size, Interpolation interp, Image* dst);
// Its output size, with the same checks (the pixel limit applies to the resized image even where only a
// window of it is computed).
Status shorter_side_size(const Image& src, int size, int* out_w, int* out_h);

// torchvision transforms.CenterCrop((crop_h, crop_w)): zero padding where the crop is larger than the image,
// top/left = int(round((size - crop) / 2.0)) with Python's round-half-to-even.
Status center_crop(const Image& src, int crop_w, int crop_h, Image* dst);
// Where that crop's top-left corner lies in a width x height image (negative where padding is added).
void center_crop_origin(int width, int height, int crop_w, int crop_h, int* left, int* top);

// The eval pipeline of the model's metadata: RGB or L (pp.channels) -> resize shorter side
// (pp.resize_shorter)
// -> centre crop (pp.crop_w x pp.crop_h) -> /255 (float32) -> (x - mean) / std (float32, in that order) ->
// dst[channels * crop_h * crop_w], CHW. mean/std hold pp.channels values or one value for all channels.
Status preprocess_image(const Image& img, const Preprocess& pp, float* dst);
Status load_and_preprocess(const std::string& path, const Preprocess& pp, float* dst);

}  // namespace vitrt
