// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// PNG decoding with libpng, giving what PIL 9.4's Image.open(...).convert('RGB') gives:
//  - gray 1/2/4/8-bit: levels scaled to 0..255 (v*255/(2^d-1)) and replicated to R=G=B;
//  - palette (any depth): looked up in PLTE; tRNS is ignored (convert('RGB') drops transparency);
//  - gray+alpha, RGBA: the alpha channel is dropped, not composited;
//  - 16-bit RGB, RGBA, gray+alpha: PIL keeps the high byte of each sample (v >> 8, truncating);
//  - 16-bit gray: PIL opens it as mode "I" and convert('RGB') *clips* the 0..65535 value to 0..255, so every
//    value >= 255 becomes white. We do the same on purpose, to stay equal to the reference pipeline.
// Gamma, colour profiles and other ancillary chunks are ignored, as PIL does. Interlaced files are supported.
// Known difference: a file cut inside the last few bytes of its image data (zlib checksum, IDAT CRC) whose
// pixel rows are all present is accepted by PIL but refused here as truncated. A missing IEND is accepted by
// both. libpng errors arrive through a custom error function that longjmps back into decode_core(), which
// owns no C++ objects with destructors (everything it fills lives in the caller's frame); warnings are
// discarded (the last one is kept to explain an IHDR error).
// Hostile files (limits in image.h): the header's size is checked against kMaxImagePixels, kMaxPngSide and
// what the rest of the file can inflate to before the image is allocated; non-interlaced files are then
// decoded row by row, interlaced ones through a whole-image buffer of at most kMaxImageDecodeBytes.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "image/decoders.h"

namespace vitrt {
namespace image_internal {
namespace {

struct PngSource {
  const uint8_t* data;
  size_t size;
  size_t pos;
};

struct PngContext {
  png_structp png = nullptr;
  png_infop info = nullptr;
  PngSource src{};
  char message[256] = {0};
  char warning[256] = {0};
  Status status;  // set instead of message for our own checks
};

void png_error_handler(png_structp png, png_const_charp msg) {
  auto* ctx = static_cast<PngContext*>(png_get_error_ptr(png));
  std::snprintf(ctx->message, sizeof ctx->message, "%s", msg ? msg : "unknown libpng error");
  png_longjmp(png, 1);
}

// Warnings are dropped, except that the last one is kept to explain an IHDR error (libpng warns "Image width
// exceeds user limit in IHDR", then errors with just "Invalid IHDR data").
void png_warning_handler(png_structp png, png_const_charp msg) {
  auto* ctx = static_cast<PngContext*>(png_get_error_ptr(png));
  std::snprintf(ctx->warning, sizeof ctx->warning, "%s", msg ? msg : "");
}

void png_read_data(png_structp png, png_bytep out, png_size_t length) {
  auto* ctx = static_cast<PngContext*>(png_get_io_ptr(png));
  PngSource& s = ctx->src;
  if (length > s.size - s.pos) {
    std::snprintf(ctx->message, sizeof ctx->message, "file is truncated");
    png_longjmp(png, 1);
  }
  std::memcpy(out, s.data + s.pos, length);
  s.pos += length;
}

// Deflate's best ratio: a 258-byte match costs at least 2 bits (1-bit length and distance codes), 1032:1. A
// file whose remaining bytes cannot inflate to the image data its header declares is refused before anything
// is allocated for the image (a 57-byte PNG must not make us allocate for 13000x13000 RGBA16).
constexpr uint64_t kMaxDeflateRatio = 1032;

int file_channels(int color_type) {
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      return 2;
    case PNG_COLOR_TYPE_RGB:
      return 3;
    case PNG_COLOR_TYPE_RGB_ALPHA:
      return 4;
    default:
      return 1;  // gray, palette
  }
}

// One row after expansion (c channels of 8 or 16 bits) to RGB; see the top comment for the rules.
void convert_row(const uint8_t* in, int w, int c, bool sixteen, uint8_t* o) {
  // Only 16-bit single-channel gray clips; every other 16-bit layout keeps the high byte.
  const bool gray16 = sixteen && c == 1;
  const int bytes = sixteen ? 2 : 1;
  for (int x = 0; x < w; ++x, in += c * bytes, o += 3) {
    if (gray16) {
      const unsigned g = (static_cast<unsigned>(in[0]) << 8) | in[1];
      o[0] = o[1] = o[2] = static_cast<uint8_t>(g > 255 ? 255 : g);
    } else if (c <= 2) {  // gray, gray+alpha: high byte (16-bit) or the byte (8-bit)
      o[0] = o[1] = o[2] = in[0];
    } else {  // RGB, RGBA
      o[0] = in[0];
      o[1] = in[bytes];
      o[2] = in[2 * bytes];
    }
  }
}

// Everything that may longjmp happens here; it owns no objects with destructors (everything it fills lives in
// the caller's frame). Returns false with ctx->message (and ctx->status for a limit or allocation failure)
// set. Non-interlaced images are decoded one row at a time into `raw` and converted straight into `out`;
// interlaced ones need the whole image in `raw` (bounded by kMaxImageDecodeBytes).
bool decode_core(PngContext* ctx, Image* out, std::vector<uint8_t>* raw, std::vector<png_bytep>* rows) {
  if (setjmp(png_jmpbuf(ctx->png))) return false;
  png_set_read_fn(ctx->png, ctx, png_read_data);
  // PIL verifies the CRC of every chunk before the image data, ancillary ones included; libpng by default
  // only warns for ancillary chunks. (Unlike PIL we also verify IDAT CRCs; PIL skips them.)
  png_set_crc_action(ctx->png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
  png_set_user_limits(ctx->png, kMaxPngSide, kMaxPngSide);
  // Ancillary chunks we ignore anyway: at most 1000 of them, none above 8 MiB decompressed (libpng's
  // defaults).
  png_set_chunk_cache_max(ctx->png, 1000);
  png_set_chunk_malloc_max(ctx->png, 8u << 20);
  png_read_info(ctx->png, ctx->info);
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
  png_get_IHDR(ctx->png, ctx->info, &width, &height, &bit_depth, &color_type, &interlace, nullptr, nullptr);
  if (width == 0 || height == 0 || static_cast<int64_t>(width) * height > kMaxPixels) {
    ctx->status = bad_input("image size " + pixel_limit_message(width, height));
    return false;
  }
  // Sides are at most kMaxPngSide, so none of these products can overflow 64 bits.
  const uint64_t file_rowbytes = (uint64_t{width} * bit_depth * file_channels(color_type) + 7) / 8;
  const uint64_t min_data = file_rowbytes * height;
  const uint64_t left = ctx->src.size - ctx->src.pos;
  if (min_data > left * kMaxDeflateRatio) {
    ctx->status =
        bad_input("truncated or crafted PNG: its header declares " + std::to_string(width) + "x" +
                  std::to_string(height) + " at " + std::to_string(bit_depth) + " bits x " +
                  std::to_string(file_channels(color_type)) + " channels, " + std::to_string(min_data) +
                  " bytes of pixel data, but the " + std::to_string(left) +
                  " bytes after the header inflate to at most " + std::to_string(left * kMaxDeflateRatio));
    return false;
  }
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(ctx->png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(ctx->png);
  const int passes = png_set_interlace_handling(ctx->png);
  png_read_update_info(ctx->png, ctx->info);
  const int c = png_get_channels(ctx->png, ctx->info);
  const int depth = png_get_bit_depth(ctx->png, ctx->info);
  const size_t rowbytes = png_get_rowbytes(ctx->png, ctx->info);
  if (c < 1 || c > 4 || (depth != 8 && depth != 16) ||
      rowbytes < static_cast<size_t>(width) * c * (depth / 8)) {
    ctx->status = unsupported("unexpected PNG layout after expansion (" + std::to_string(c) + " channels, " +
                              std::to_string(depth) + "-bit)");
    return false;
  }
  ctx->status = allocate_image(static_cast<int>(width), static_cast<int>(height), 3, out, "PNG");
  if (!ctx->status.ok()) return false;
  const size_t out_row = static_cast<size_t>(width) * 3;
  if (passes <= 1) {
    try {
      raw->resize(rowbytes);
    } catch (const std::bad_alloc&) {
      ctx->status = bad_input("cannot allocate a PNG row of " + std::to_string(rowbytes) + " bytes");
      return false;
    }
    for (png_uint_32 y = 0; y < height; ++y) {
      png_read_row(ctx->png, raw->data(), nullptr);
      convert_row(raw->data(), static_cast<int>(width), c, depth == 16, out->pixels.data() + y * out_row);
    }
    return true;
  }
  const uint64_t whole = uint64_t{rowbytes} * height;
  if (whole > kMaxImageDecodeBytes) {
    ctx->status = bad_input("interlaced PNG of " + std::to_string(width) + "x" + std::to_string(height) +
                            " needs " + std::to_string(whole) + " bytes to decode, above the limit of " +
                            std::to_string(kMaxImageDecodeBytes) + " bytes");
    return false;
  }
  try {
    raw->resize(static_cast<size_t>(whole));
    rows->resize(height);
  } catch (const std::bad_alloc&) {
    ctx->status =
        bad_input("cannot allocate " + std::to_string(whole) + " bytes to decode an interlaced PNG");
    return false;
  }
  for (png_uint_32 y = 0; y < height; ++y) (*rows)[y] = raw->data() + y * rowbytes;
  png_read_image(ctx->png, rows->data());
  for (png_uint_32 y = 0; y < height; ++y)
    convert_row((*rows)[y], static_cast<int>(width), c, depth == 16, out->pixels.data() + y * out_row);
  // No png_read_end(): like PIL, chunks after the image data (IEND included) are not required.
  return true;
}

}  // namespace

Status decode_png(const uint8_t* data, size_t size, const std::string& name, Image* out) {
  PngContext ctx;
  ctx.src = PngSource{data, size, 0};
  ctx.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_error_handler, png_warning_handler);
  if (ctx.png == nullptr) return bad_input("image '" + name + "': cannot create a PNG reader");
  ctx.info = png_create_info_struct(ctx.png);
  if (ctx.info == nullptr) {
    png_destroy_read_struct(&ctx.png, nullptr, nullptr);
    return bad_input("image '" + name + "': cannot create a PNG reader");
  }
  std::vector<uint8_t> raw;
  std::vector<png_bytep> rows;
  const bool ok = decode_core(&ctx, out, &raw, &rows);
  png_destroy_read_struct(&ctx.png, &ctx.info, nullptr);
  if (ok) return Status::Ok();
  *out = Image();
  if (!ctx.status.ok()) return ctx.status.with_context("image '" + name + "'");
  std::string why = ctx.message;
  if (why.find("IHDR") != std::string::npos && ctx.warning[0] != '\0')
    why += std::string(" (") + ctx.warning + ")";
  if (why.find("user limit") != std::string::npos)
    why += " (at most " + std::to_string(kMaxPngSide) + " pixels a side)";
  else if (why.find("Out of memory") != std::string::npos || why.find("out of memory") != std::string::npos)
    why += " (the image needs more memory than is available)";
  return bad_input("image '" + name + "': corrupt or truncated PNG: " + why);
}

}  // namespace image_internal
}  // namespace vitrt
