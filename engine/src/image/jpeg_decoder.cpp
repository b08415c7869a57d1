// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// JPEG decoding with libjpeg-turbo, giving what PIL 9.4's Image.open(...).convert('RGB') gives. PIL drives
// the same library with its defaults (ISLOW integer DCT, fancy upsampling, no scaling), and so do we:
//  - 3 components (YCbCr, or RGB per the Adobe marker): libjpeg's RGB output;
//  - 1 component: gray replicated to R=G=B;
//  - 4 components (CMYK, YCCK): libjpeg's CMYK output, inverted as PIL's "CMYK;I" rawmode always does (Adobe
//    convention), then PIL's cmyk2rgb: R = clip(nk - nk*C/255) with nk = 255 - K and its rounded MULDIV255.
// EXIF orientation is not applied (PIL's open/convert does not apply it). Truncated data is an error (PIL
// raises "image file is truncated"); other libjpeg warnings (e.g. extraneous bytes) are ignored, as PIL does.
// libjpeg errors arrive through a custom error_exit that longjmps back into decode_core(), which owns no C++
// objects with destructors; messages are never printed.
#include <cstdio>
// jpeglib.h needs size_t and FILE declared first.
#include <jerror.h>
#include <jpeglib.h>

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <new>
#include <vector>

#include "image/decoders.h"

namespace vitrt {
namespace image_internal {
namespace {

struct JpegError {
  jpeg_error_mgr mgr;  // first member: libjpeg hands us a jpeg_error_mgr*
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool truncated;
  bool oom;
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  cinfo->err->format_message(cinfo, err->message);
  longjmp(err->jump, 1);
}

void jpeg_emit_message(j_common_ptr cinfo, int msg_level) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  if (msg_level < 0) {
    if (cinfo->err->msg_code == JWRN_JPEG_EOF) err->truncated = true;
    cinfo->err->num_warnings++;
  }
}

void jpeg_output_message(j_common_ptr) {}

// Decodes into rows of out_components bytes per pixel (1, 3 or 4). Everything that may longjmp happens here.
bool decode_core(jpeg_decompress_struct* cinfo, JpegError* err, const uint8_t* data, size_t size, int* width,
                 int* height, int* components, std::vector<uint8_t>* raw) {
  if (setjmp(err->jump)) return false;
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  switch (cinfo->num_components) {
    case 1:
      cinfo->out_color_space = JCS_GRAYSCALE;
      break;
    case 3:
      cinfo->out_color_space = JCS_RGB;
      break;
    case 4:
      cinfo->out_color_space = JCS_CMYK;
      break;
    default:
      std::snprintf(err->message, sizeof err->message, "unsupported JPEG with %d components",
                    cinfo->num_components);
      return false;
  }
  jpeg_start_decompress(cinfo);
  const int64_t w = cinfo->output_width, h = cinfo->output_height, c = cinfo->output_components;
  if (w <= 0 || h <= 0 || w * h > kMaxPixels) {
    std::snprintf(err->message, sizeof err->message,
                  "image size %lldx%lld is empty or above the limit of %lld pixels",
                  static_cast<long long>(w), static_cast<long long>(h), static_cast<long long>(kMaxPixels));
    return false;
  }
  try {
    raw->resize(static_cast<size_t>(w * h * c));
  } catch (const std::bad_alloc&) {
    err->oom = true;
    return false;
  }
  while (cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW row = raw->data() + static_cast<size_t>(cinfo->output_scanline) * w * c;
    jpeg_read_scanlines(cinfo, &row, 1);
    if (err->truncated) break;  // libjpeg filled the rest with gray; PIL refuses truncated files
  }
  *width = static_cast<int>(w);
  *height = static_cast<int>(h);
  *components = static_cast<int>(c);
  // No jpeg_finish_decompress(): like PIL, nothing after the last scan (EOI included) is required.
  return true;
}

}  // namespace

Status decode_jpeg(const uint8_t* data, size_t size, const std::string& name, Image* out) {
  jpeg_decompress_struct cinfo;
  std::memset(&cinfo, 0, sizeof cinfo);  // jpeg_destroy_decompress is safe even if create never ran
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  err.mgr.emit_message = jpeg_emit_message;
  err.mgr.output_message = jpeg_output_message;
  err.message[0] = '\0';
  err.truncated = false;
  err.oom = false;
  int w = 0, h = 0, c = 0;
  std::vector<uint8_t> raw;
  const bool ok = decode_core(&cinfo, &err, data, size, &w, &h, &c, &raw);
  jpeg_destroy_decompress(&cinfo);
  if (err.oom) return out_of_memory("image '" + name + "': out of memory while decoding JPEG");
  if (err.truncated) return bad_input("image '" + name + "': JPEG file is truncated (premature end of data)");
  if (!ok) return bad_input("image '" + name + "': corrupt or unsupported JPEG: " + err.message);
  VITRT_RETURN_IF_ERROR(allocate_image(w, h, 3, out).with_context("image '" + name + "'"));
  uint8_t* o = out->pixels.data();
  const uint8_t* in = raw.data();
  const size_t n = static_cast<size_t>(w) * h;
  if (c == 1) {
    for (size_t i = 0; i < n; ++i, o += 3) o[0] = o[1] = o[2] = in[i];
  } else if (c == 3) {
    std::copy(raw.begin(), raw.end(), out->pixels.begin());
  } else {
    // PIL: "CMYK;I" unpacking (255 - v), then cmyk2rgb with MULDIV255(a, b) = ((t >> 8) + t) >> 8, t = a*b +
    // 128.
    for (size_t i = 0; i < n; ++i, in += 4, o += 3) {
      const int k = 255 - in[3];
      const int nk = 255 - k;
      for (int ch = 0; ch < 3; ++ch) {
        const int cv = 255 - in[ch];
        const int t = cv * nk + 128;
        const int v = nk - (((t >> 8) + t) >> 8);
        o[ch] = static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
      }
    }
  }
  return Status::Ok();
}

}  // namespace image_internal
}  // namespace vitrt
