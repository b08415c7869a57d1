// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The C API's error reporting: the thread-local last message, versions, exit codes and input limits.
#include "capi/capi_internal.h"
#include "common/exit_codes.h"
#include "common/npy.h"
#include "format_version.h"
#include "image/image.h"

namespace vitrt::capi {
namespace {
thread_local std::string g_last_error;
}  // namespace

vitrt_status_t report(const Status& st) noexcept {
  if (st.ok()) {
    g_last_error.clear();
    return VITRT_OK;
  }
  return fail(static_cast<vitrt_status_t>(static_cast<int>(st.code())), st.message());
}

vitrt_status_t fail(vitrt_status_t code, const char* message) noexcept {
  try {
    g_last_error = message;
  } catch (...) {
    g_last_error.clear();  // no memory for the message: an empty one rather than a stale one
  }
  return code;
}

vitrt_status_t fail(vitrt_status_t code, const std::string& message) noexcept {
  return fail(code, message.c_str());
}

void copy_shape(const Shape& s, int32_t* rank, int64_t* dims) {
  *rank = s.rank;
  for (int i = 0; i < VITRT_MAX_RANK; ++i) dims[i] = i < s.rank ? s.dims[i] : 0;
}

}  // namespace vitrt::capi

using namespace vitrt::capi;

extern "C" {

const char* vitrt_version(void) {
  return "0.1.0";
}

uint32_t vitrt_format_version(void) {
  return vitrt::kFormatVersion;
}

const char* vitrt_last_error_message(void) {
  return g_last_error.c_str();
}

int vitrt_exit_code(vitrt_status_t status) {
  // One mapping for every tool: common/exit_codes.h (vitrt-convert uses it directly).
  return vitrt::exit_code_for(vitrt::Status(static_cast<vitrt::StatusCode>(status), std::string()),
                              /*loading_model=*/false);
}

vitrt_status_t vitrt_get_input_limits(vitrt_input_limits_t* limits) {
  return guarded([&] {
    if (vitrt_status_t st = check_info(limits, "vitrt_get_input_limits")) return st;
    vitrt_input_limits_t l = {};
    l.struct_size = sizeof l;
    l.max_image_file_bytes = vitrt::kMaxImageFileBytes;
    l.max_image_pixels = vitrt::kMaxImagePixels;
    l.max_png_side = vitrt::kMaxPngSide;
    l.max_jpeg_scans = vitrt::kMaxJpegScans;
    l.max_image_decode_bytes = vitrt::kMaxImageDecodeBytes;
    l.max_npy_file_bytes = vitrt::kMaxNpyFileBytes;
    return copy_info(l, limits);
  });
}

}  // extern "C"
