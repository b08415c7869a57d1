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
// Hostile files (limits in image.h): the header's size is checked against kMaxImagePixels and against what
// the file's bytes can encode before the image is allocated; rows are decoded one at a time; libjpeg's own
// memory is capped at kMaxImageDecodeBytes and a progressive file at kMaxJpegScans scans.
#include <cstdio>
// jpeglib.h needs size_t and FILE declared first.
#include <jerror.h>
#include <jpeglib.h>

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
  bool limit;  // more than kMaxJpegScans scans
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

// Plausibility of the declared size, checked before anything is allocated for the image: a Huffman-coded scan
// spends at least 1 bit on every 8x8 block of the components it codes, and one block of a subsampled
// component covers at most 64 * 4 * 4 pixels (sampling factors are 1 to 4), so each byte of the file accounts
// for at most 8 * 1024 pixels. Arithmetic coding can spend less than a bit per block; there only kMaxPixels
// bounds the size.
constexpr uint64_t kMaxPixelsPerJpegByte = 8 * 1024;

void jpeg_progress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxJpegScans) {
    auto* err = reinterpret_cast<JpegError*>(cinfo->err);
    std::snprintf(err->message, sizeof err->message, "more than %d scans", kMaxJpegScans);
    err->limit = true;
    longjmp(err->jump, 1);
  }
}

// PIL's conversion of one row of out_components bytes per pixel (1, 3 or 4) to RGB.
void convert_row(const uint8_t* in, int w, int c, uint8_t* o) {
  if (c == 1) {
    for (int i = 0; i < w; ++i, o += 3) o[0] = o[1] = o[2] = in[i];
  } else if (c == 3) {
    std::memcpy(o, in, static_cast<size_t>(w) * 3);
  } else {
    // PIL: "CMYK;I" unpacking (255 - v), then cmyk2rgb with MULDIV255(a, b) = ((t >> 8) + t) >> 8, t = a*b +
    // 128.
    for (int i = 0; i < w; ++i, in += 4, o += 3) {
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
}

// Everything that may longjmp happens here; it owns no objects with destructors (what it fills lives in the
// caller's frame). Rows are decoded one at a time into `row` and converted straight into `out`.
bool decode_core(jpeg_decompress_struct* cinfo, JpegError* err, jpeg_progress_mgr* progress,
                 const uint8_t* data, size_t size, Image* out, std::vector<uint8_t>* row, Status* status) {
  if (setjmp(err->jump)) return false;
  jpeg_create_decompress(cinfo);
  // libjpeg's own buffers (a progressive image's coefficients above all) may not pass this; beyond it libjpeg
  // would need a backing store, which this build lacks, and fails cleanly (JERR_NO_BACKING_STORE).
  cinfo->mem->max_memory_to_use = static_cast<long>(kMaxImageDecodeBytes);
  progress->progress_monitor = jpeg_progress;
  cinfo->progress = progress;
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  const int64_t w = cinfo->image_width, h = cinfo->image_height;
  if (w <= 0 || h <= 0 || w * h > kMaxPixels) {
    *status = bad_input("image size " + pixel_limit_message(w, h));
    return false;
  }
  if (!cinfo->arith_code && static_cast<uint64_t>(w * h) > size * kMaxPixelsPerJpegByte) {
    *status =
        bad_input("truncated or crafted JPEG: its header declares " + std::to_string(w) + "x" +
                  std::to_string(h) + " pixels, more than its " + std::to_string(size) +
                  " bytes can encode (at most " + std::to_string(kMaxPixelsPerJpegByte) + " pixels a byte)");
    return false;
  }
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
  const int c = cinfo->output_components;
  if (cinfo->output_width != w || cinfo->output_height != h || (c != 1 && c != 3 && c != 4)) {
    std::snprintf(err->message, sizeof err->message, "unexpected output layout %ux%u x %d",
                  cinfo->output_width, cinfo->output_height, c);
    return false;
  }
  *status = allocate_image(static_cast<int>(w), static_cast<int>(h), 3, out, "JPEG");
  if (!status->ok()) return false;
  try {
    row->resize(static_cast<size_t>(w) * c);
  } catch (const std::bad_alloc&) {
    *status = bad_input("cannot allocate a JPEG row");
    return false;
  }
  const size_t out_row = static_cast<size_t>(w) * 3;
  while (cinfo->output_scanline < cinfo->output_height) {
    const JDIMENSION y = cinfo->output_scanline;
    JSAMPROW r = row->data();
    if (jpeg_read_scanlines(cinfo, &r, 1) != 1) break;
    if (err->truncated) break;  // libjpeg filled the rest with gray; PIL refuses truncated files
    convert_row(row->data(), static_cast<int>(w), c, out->pixels.data() + y * out_row);
  }
  if (cinfo->output_scanline != cinfo->output_height && !err->truncated) {
    std::snprintf(err->message, sizeof err->message, "decoding stopped at row %u of %u",
                  cinfo->output_scanline, cinfo->output_height);
    return false;
  }
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
  err.limit = false;
  jpeg_progress_mgr progress;
  std::memset(&progress, 0, sizeof progress);
  std::vector<uint8_t> row;
  Status status;  // set by our own checks, instead of err.message
  const bool ok = decode_core(&cinfo, &err, &progress, data, size, out, &row, &status);
  const int msg_code = err.mgr.msg_code;
  jpeg_destroy_decompress(&cinfo);
  if (ok && !err.truncated) return Status::Ok();
  *out = Image();
  if (!status.ok()) return status.with_context("image '" + name + "'");
  if (err.truncated) return bad_input("image '" + name + "': JPEG file is truncated (premature end of data)");
  if (err.limit) return bad_input("image '" + name + "': JPEG with " + err.message + " is refused");
  if (msg_code == JERR_NO_BACKING_STORE || msg_code == JERR_OUT_OF_MEMORY)
    return bad_input("image '" + name + "': JPEG needs more than " + std::to_string(kMaxImageDecodeBytes) +
                     " bytes to decode (the limit), or more memory than is available: " + err.message);
  return bad_input("image '" + name + "': corrupt or unsupported JPEG: " + err.message);
}

}  // namespace image_internal
}  // namespace vitrt
