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
// discarded.
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
  bool oom = false;
};

void png_error_handler(png_structp png, png_const_charp msg) {
  auto* ctx = static_cast<PngContext*>(png_get_error_ptr(png));
  std::snprintf(ctx->message, sizeof ctx->message, "%s", msg ? msg : "unknown libpng error");
  png_longjmp(png, 1);
}

void png_warning_handler(png_structp, png_const_charp) {}

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

// Raw rows (after palette and low-bit-depth expansion) in `raw`; layout described by the return values.
struct RawLayout {
  png_uint_32 width = 0, height = 0;
  int channels = 0, bit_depth = 0, color_type = 0;
  size_t rowbytes = 0;
};

// Everything that may longjmp happens here. Returns false with ctx->message set on failure.
bool decode_core(PngContext* ctx, RawLayout* layout, std::vector<uint8_t>* raw,
                 std::vector<png_bytep>* rows) {
  if (setjmp(png_jmpbuf(ctx->png))) return false;
  png_set_read_fn(ctx->png, ctx, png_read_data);
  // PIL verifies the CRC of every chunk before the image data, ancillary ones included; libpng by default
  // only warns for ancillary chunks. (Unlike PIL we also verify IDAT CRCs; PIL skips them.)
  png_set_crc_action(ctx->png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
  png_read_info(ctx->png, ctx->info);
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
  png_get_IHDR(ctx->png, ctx->info, &width, &height, &bit_depth, &color_type, &interlace, nullptr, nullptr);
  if (width == 0 || height == 0 || static_cast<int64_t>(width) * height > kMaxPixels) {
    std::snprintf(ctx->message, sizeof ctx->message,
                  "image size %ux%u is empty or above the limit of %lld pixels", static_cast<unsigned>(width),
                  static_cast<unsigned>(height), static_cast<long long>(kMaxPixels));
    return false;
  }
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(ctx->png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(ctx->png);
  png_set_interlace_handling(ctx->png);
  png_read_update_info(ctx->png, ctx->info);
  layout->width = width;
  layout->height = height;
  layout->channels = png_get_channels(ctx->png, ctx->info);
  layout->bit_depth = png_get_bit_depth(ctx->png, ctx->info);
  layout->color_type = png_get_color_type(ctx->png, ctx->info);
  layout->rowbytes = png_get_rowbytes(ctx->png, ctx->info);
  try {
    raw->resize(layout->rowbytes * height);
    rows->resize(height);
  } catch (const std::bad_alloc&) {
    ctx->oom = true;
    std::snprintf(ctx->message, sizeof ctx->message, "out of memory");
    return false;
  }
  for (png_uint_32 y = 0; y < height; ++y) (*rows)[y] = raw->data() + y * layout->rowbytes;
  png_read_image(ctx->png, rows->data());
  // No png_read_end(): like PIL, chunks after the image data (IEND included) are not required.
  return true;
}

}  // namespace

Status decode_png(const uint8_t* data, size_t size, const std::string& name, Image* out) {
  PngContext ctx;
  ctx.src = PngSource{data, size, 0};
  ctx.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &ctx, png_error_handler, png_warning_handler);
  if (ctx.png == nullptr) return out_of_memory("image '" + name + "': cannot create a PNG reader");
  ctx.info = png_create_info_struct(ctx.png);
  if (ctx.info == nullptr) {
    png_destroy_read_struct(&ctx.png, nullptr, nullptr);
    return out_of_memory("image '" + name + "': cannot create a PNG reader");
  }
  RawLayout layout;
  std::vector<uint8_t> raw;
  std::vector<png_bytep> rows;
  const bool ok = decode_core(&ctx, &layout, &raw, &rows);
  png_destroy_read_struct(&ctx.png, &ctx.info, nullptr);
  if (!ok) {
    if (ctx.oom) return out_of_memory("image '" + name + "': out of memory while decoding PNG");
    return bad_input("image '" + name + "': corrupt or truncated PNG: " + ctx.message);
  }
  const int c = layout.channels;
  const bool sixteen = layout.bit_depth == 16;
  if ((c < 1 || c > 4) || (layout.bit_depth != 8 && !sixteen))
    return unsupported("image '" + name + "': unexpected PNG layout after expansion (" + std::to_string(c) +
                       " channels, " + std::to_string(layout.bit_depth) + "-bit)");
  const int w = static_cast<int>(layout.width), h = static_cast<int>(layout.height);
  VITRT_RETURN_IF_ERROR(allocate_image(w, h, 3, out).with_context("image '" + name + "'"));
  // Only 16-bit single-channel gray clips; every other 16-bit layout keeps the high byte (see the top
  // comment).
  const bool gray16 = sixteen && c == 1;
  const int bytes = sixteen ? 2 : 1;
  for (int y = 0; y < h; ++y) {
    const uint8_t* in = raw.data() + static_cast<size_t>(y) * layout.rowbytes;
    uint8_t* o = out->pixels.data() + static_cast<size_t>(y) * w * 3;
    for (int x = 0; x < w; ++x, in += c * bytes, o += 3) {
      uint8_t v[3];
      if (gray16) {
        const unsigned g = (static_cast<unsigned>(in[0]) << 8) | in[1];
        v[0] = v[1] = v[2] = static_cast<uint8_t>(g > 255 ? 255 : g);
      } else if (c <= 2) {  // gray, gray+alpha: high byte (16-bit) or the byte (8-bit)
        v[0] = v[1] = v[2] = in[0];
      } else {  // RGB, RGBA
        v[0] = in[0];
        v[1] = in[bytes];
        v[2] = in[2 * bytes];
      }
      o[0] = v[0];
      o[1] = v[1];
      o[2] = v[2];
    }
  }
  return Status::Ok();
}

}  // namespace image_internal
}  // namespace vitrt
