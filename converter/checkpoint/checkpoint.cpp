// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "checkpoint/checkpoint.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>

#include "checkpoint/read_limits.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/torch_zip.h"

namespace vitrt::convert {
namespace {

enum class Format { kZip, kSafetensors, kLegacyPickle, kLegacyTar, kNpy, kEmpty, kUnknown };

bool little_endian_host() {
  const uint16_t one = 1;
  uint8_t b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

Status sniff(const std::string& path, Format* format, std::string* head_hex) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return io_error("cannot open the file");
  uint8_t head[512] = {0};
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fclose(f);
  static const char* hex = "0123456789abcdef";
  for (size_t i = 0; i < n && i < 8; ++i) {
    *head_hex += hex[head[i] >> 4];
    *head_hex += hex[head[i] & 15];
  }
  uint64_t st_len = 0;
  for (int k = 7; k >= 0; --k) st_len = (st_len << 8) | head[k];
  if (n == 0)
    *format = Format::kEmpty;
  else if (n >= 4 && std::memcmp(head, "PK\x03\x04", 4) == 0)
    *format = Format::kZip;
  else if (n >= 4 && std::memcmp(head, "PK\x05\x06", 4) == 0)
    *format = Format::kZip;  // empty archive
  else if (n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
    *format = Format::kLegacyPickle;
  else if (n >= 262 && std::memcmp(head + 257, "ustar", 5) == 0)
    *format = Format::kLegacyTar;
  else if (n >= 6 && std::memcmp(head, "\x93NUMPY", 6) == 0)
    *format = Format::kNpy;
  else if (n > 8 && head[8] == '{' && size > 8 && st_len <= static_cast<uint64_t>(size) - 8)
    *format = Format::kSafetensors;
  else if (n > 8 && head[8] == '{')
    *format = Format::kSafetensors;  // length checked (and refused) by the reader
  else
    *format = Format::kUnknown;
  return Status::Ok();
}

Status load(const std::string& path, Checkpoint* out) {
  if (!little_endian_host()) return unsupported("checkpoint reading needs a little-endian host");
  uint64_t size = 0;
  VITRT_RETURN_IF_ERROR(
      regular_file_size(path, &size));  // never open a FIFO or device: it would block or never end
  Format format;
  std::string head;
  VITRT_RETURN_IF_ERROR(sniff(path, &format, &head));
  switch (format) {
    case Format::kZip:
      return load_torch_zip(path, out);
    case Format::kSafetensors:
      return load_safetensors(path, out);
    case Format::kLegacyPickle:
      return unsupported(
          "legacy torch.save format (a bare pickle stream, written by torch < 1.6 or with "
          "_use_new_zipfile_serialization=False); re-save it with torch >= 1.6: "
          "torch.save(torch.load(path, map_location='cpu'), new_path)");
    case Format::kLegacyTar:
      return unsupported(
          "legacy tar-based torch.save format (torch <= 0.3); load it with torch and re-save it with "
          "torch >= 1.6");
    case Format::kNpy:
      return bad_input("this is a NumPy .npy array, not a checkpoint");
    case Format::kEmpty:
      return bad_input("the file is empty");
    case Format::kUnknown:
      break;
  }
  return bad_input("not a recognised checkpoint (starts with bytes " + head +
                   "); expected a torch.save zip archive (.pth/.pt, torch >= 1.6) or a .safetensors file");
}

}  // namespace

Status load_checkpoint(const std::string& path, Checkpoint* out) {
  *out = Checkpoint();
  Status st;
  try {
    st = load(path, out);
  } catch (const std::bad_alloc&) {
    st = out_of_memory("out of memory while reading the checkpoint");
  } catch (const std::exception& e) {
    st = bad_input(std::string("unexpected error while reading the checkpoint: ") + e.what());
  }
  if (!st.ok()) {
    *out = Checkpoint();
    st.with_context("'" + path + "'");
  }
  return st;
}

}  // namespace vitrt::convert
