// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Hostile tensors and images: .npy headers that declare more data than the file holds (or less), shapes whose
// byte size overflows, PNG/JPEG headers that declare far more pixels than their data can encode, extreme
// aspect ratios through the resize, and inputs that are not regular files. Each is a kBadInput naming the
// input, found before anything is allocated for the declared size.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
// jpeglib.h needs size_t and FILE declared first.
#include <jpeglib.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/npy.h"
#include "image/image.h"

using namespace vitrt;

namespace {

std::string temp_dir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/vitrt_inputs_test_XXXXXX";
    const char* d = mkdtemp(tmpl);
    REQUIRE(d != nullptr);
    return std::string(d);
  }();
  return dir;
}

std::string write_file(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = temp_dir() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  std::fclose(f);
  return path;
}

// A version 1.0 .npy file: preamble, the header dict padded to 64 bytes, then `data_bytes` zero bytes.
std::vector<uint8_t> npy_bytes(const std::string& descr, const std::string& shape, size_t data_bytes) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string pre = "\x93NUMPY";
  pre += '\x01';
  pre += '\x00';
  pre += static_cast<char>(h.size() & 0xff);
  pre += static_cast<char>(h.size() >> 8);
  const std::string all = pre + h;
  std::vector<uint8_t> b(all.begin(), all.end());
  b.resize(b.size() + data_bytes, 0);
  return b;
}

void require_bad_input(const Status& s, const std::vector<std::string>& words) {
  INFO(s.message());
  CHECK(s.code() == StatusCode::kBadInput);
  for (const std::string& w : words) CHECK(s.message().find(w) != std::string::npos);
}

// ---- PNG building (stored deflate blocks, so no zlib needed) ----

uint32_t crc32(const uint8_t* p, size_t n, uint32_t c = 0) {
  c = ~c;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

void put32(std::vector<uint8_t>* b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b->push_back(static_cast<uint8_t>(v >> s));
}

void chunk(std::vector<uint8_t>* b, const char* type, const std::vector<uint8_t>& data) {
  put32(b, static_cast<uint32_t>(data.size()));
  const size_t start = b->size();
  b->insert(b->end(), type, type + 4);
  b->insert(b->end(), data.begin(), data.end());
  put32(b, crc32(b->data() + start, b->size() - start));
}

// A PNG with the given IHDR and `filtered` (rows with their filter bytes) as one zlib stream of stored
// blocks.
std::vector<uint8_t> png_bytes(uint32_t w, uint32_t h, uint8_t depth, uint8_t color,
                               const std::vector<uint8_t>& filtered) {
  std::vector<uint8_t> b = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
  std::vector<uint8_t> ihdr;
  put32(&ihdr, w);
  put32(&ihdr, h);
  ihdr.insert(ihdr.end(), {depth, color, 0, 0, 0});
  chunk(&b, "IHDR", ihdr);
  std::vector<uint8_t> z = {0x78, 0x01};
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(65535, filtered.size() - pos);
    const bool last = pos + n == filtered.size();
    z.insert(z.end(),
             {static_cast<uint8_t>(last), static_cast<uint8_t>(n & 0xff), static_cast<uint8_t>(n >> 8),
              static_cast<uint8_t>(~n & 0xff), static_cast<uint8_t>((~n >> 8) & 0xff)});
    z.insert(z.end(), filtered.begin() + pos, filtered.begin() + pos + n);
    pos += n;
  } while (pos < filtered.size());
  uint32_t a = 1, s = 0;
  for (uint8_t v : filtered) {
    a = (a + v) % 65521;
    s = (s + a) % 65521;
  }
  put32(&z, (s << 16) | a);
  chunk(&b, "IDAT", z);
  chunk(&b, "IEND", {});
  return b;
}

// A valid 8x8 gray baseline JPEG made by libjpeg.
std::vector<uint8_t> small_jpeg() {
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* mem = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &mem, &size);
  c.image_width = 8;
  c.image_height = 8;
  c.input_components = 1;
  c.in_color_space = JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  jpeg_start_compress(&c, TRUE);
  uint8_t row[8] = {0, 32, 64, 96, 128, 160, 192, 224};
  while (c.next_scanline < 8) {
    JSAMPROW r = row;
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  std::vector<uint8_t> b(mem, mem + size);
  jpeg_destroy_compress(&c);
  std::free(mem);
  return b;
}

}  // namespace

TEST_CASE("hostile npy: a header declaring more data than the file holds is refused before allocating") {
  // 12 KB of data behind a header declaring 1,000,000 images of 3x32x32 float32 (12 GB).
  const std::string p = write_file("big.npy", npy_bytes("<f4", "(1000000, 3, 32, 32)", 12288));
  std::vector<float> v;
  std::vector<int64_t> shape;
  require_bad_input(read_npy_f32(p, &v, &shape),
                    {"big.npy", "(1000000, 3, 32, 32)", "12288000000", "truncated"});
  CHECK(v.capacity() < 1000000);
}

TEST_CASE("hostile npy: 2^40 elements is a clean bad input naming the file and shape") {
  const std::string p = write_file("huge.npy", npy_bytes("<f4", "(1099511627776,)", 0));
  NpyArray a;
  require_bad_input(read_npy(p, &a), {"huge.npy", "(1099511627776,)"});
  std::vector<double> d;
  std::vector<int64_t> shape;
  require_bad_input(read_npy_f64(p, &d, &shape), {"huge.npy", "(1099511627776,)"});
}

TEST_CASE("hostile npy: a shape whose byte size overflows 64 bits") {
  const std::string p = write_file("overflow.npy", npy_bytes("<f8", "(4294967296, 4294967296, 16)", 64));
  NpyArray a;
  require_bad_input(read_npy(p, &a), {"overflow.npy", "(4294967296, 4294967296, 16)"});
  const std::string q = write_file("range.npy", npy_bytes("<f4", "(99999999999999999999999,)", 4));
  require_bad_input(read_npy(q, &a), {"range.npy", "bad shape"});
}

TEST_CASE("hostile npy: an empty array whose other dims multiply past 2^62 is refused (fuzz: npy)") {
  // Zero elements and zero data bytes, but (1, 8e18, 0, 2e13): any reader multiplying the non-zero dims (H*W,
  // per-image sizes) would overflow. The product of the non-zero dims must stay at most 2^62.
  const std::string p =
      write_file("empty_huge.npy", npy_bytes("<f4", "(1, 8000020000000000801, 0, 20000000000800)", 0));
  NpyArray a;
  require_bad_input(read_npy(p, &a), {"empty_huge.npy", "too many elements"});
  // 2^62 itself beside a zero is still a (countable) empty array.
  const std::string q = write_file("empty_ok.npy", npy_bytes("<f4", "(4611686018427387904, 0)", 0));
  REQUIRE(read_npy(q, &a).ok());
  CHECK(a.data.empty());
}

TEST_CASE("hostile npy: bytes after the declared data are refused (the header does not describe the file)") {
  const std::string p = write_file("trailing.npy", npy_bytes("<f4", "(1, 3, 2, 2)", 12 * 4 + 4));
  std::vector<float> v;
  std::vector<int64_t> shape;
  require_bad_input(read_npy_f32(p, &v, &shape), {"trailing.npy", "4 bytes follow"});
}

TEST_CASE("hostile npy: valid files still read, float32 and float64 either way") {
  const std::vector<float> x = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.5f};
  const std::string p = temp_dir() + "/ok.npy";
  REQUIRE(write_npy_f32(p, x.data(), {2, 3}).ok());
  std::vector<float> f;
  std::vector<double> d;
  std::vector<int64_t> shape;
  REQUIRE(read_npy_f32(p, &f, &shape).ok());
  CHECK(f == x);
  CHECK(shape == std::vector<int64_t>{2, 3});
  REQUIRE(read_npy_f64(p, &d, &shape).ok());
  REQUIRE(d.size() == x.size());
  for (size_t i = 0; i < x.size(); ++i) CHECK(d[i] == static_cast<double>(x[i]));
  // An empty array (a zero dimension) has no data bytes and is valid.
  const std::string e = write_file("empty.npy", npy_bytes("<f4", "(0, 3)", 0));
  REQUIRE(read_npy_f32(e, &f, &shape).ok());
  CHECK(f.empty());
}

TEST_CASE("hostile inputs: FIFOs, devices and directories are refused without blocking") {
  const std::string fifo = temp_dir() + "/fifo.npy";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  NpyArray a;
  require_bad_input(read_npy(fifo, &a), {"fifo.npy", "FIFO"});
  Image img;
  require_bad_input(decode_image(fifo, &img), {"fifo.npy", "FIFO"});
  require_bad_input(decode_image("/dev/zero", &img), {"/dev/zero", "character device"});
  require_bad_input(read_npy(temp_dir(), &a), {"directory"});
  CHECK(read_npy(temp_dir() + "/missing.npy", &a).code() == StatusCode::kIo);
}

TEST_CASE("hostile PNG: a tiny file declaring 13000x13000 RGBA16 is refused before allocating") {
  // IHDR and an empty zlib stream: 1.35 GB of declared pixel data behind ~60 bytes.
  const std::vector<uint8_t> b = png_bytes(13000, 13000, 16, 6, {});
  Image img;
  require_bad_input(decode_image_memory(b.data(), b.size(), "bomb.png", &img), {"bomb.png", "13000x13000"});
  CHECK(img.pixels.capacity() == 0);
}

TEST_CASE("hostile PNG: sides above the libpng limit name it") {
  const std::vector<uint8_t> b = png_bytes(2000000, 1, 8, 0, std::vector<uint8_t>(2000001, 0));
  Image img;
  require_bad_input(decode_image_memory(b.data(), b.size(), "wide.png", &img), {"wide.png", "1000000"});
}

TEST_CASE("hostile PNG: a valid image still decodes row by row") {
  // 2x2 RGB, filter type 0 on both rows.
  const std::vector<uint8_t> rows = {0, 10, 20, 30, 40, 50, 60, 0, 70, 80, 90, 100, 110, 120};
  const std::vector<uint8_t> b = png_bytes(2, 2, 8, 2, rows);
  Image img;
  REQUIRE(decode_image_memory(b.data(), b.size(), "ok.png", &img).ok());
  CHECK(img.width == 2);
  CHECK(img.height == 2);
  CHECK(img.pixels == std::vector<uint8_t>{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120});
  // The same rows cut short: truncated, not an image of zeros.
  const std::vector<uint8_t> cut = png_bytes(2, 3, 8, 2, rows);
  CHECK(decode_image_memory(cut.data(), cut.size(), "cut.png", &img).code() == StatusCode::kBadInput);
}

TEST_CASE("hostile JPEG: a small file declaring 13000x13000 is refused before allocating") {
  std::vector<uint8_t> b = small_jpeg();
  Image img;
  REQUIRE(decode_image_memory(b.data(), b.size(), "ok.jpg", &img).ok());
  CHECK(img.width == 8);
  // Patch the SOF0 frame header's height and width (FF C0, length, precision, height, width).
  bool patched = false;
  for (size_t i = 2; i + 9 < b.size(); ++i)
    if (b[i] == 0xff && b[i + 1] == 0xc0) {
      b[i + 5] = 13000 >> 8;
      b[i + 6] = 13000 & 0xff;
      b[i + 7] = 13000 >> 8;
      b[i + 8] = 13000 & 0xff;
      patched = true;
      break;
    }
  REQUIRE(patched);
  require_bad_input(decode_image_memory(b.data(), b.size(), "bomb.jpg", &img), {"bomb.jpg", "13000x13000"});
  CHECK(img.pixels.capacity() == 0);
}

TEST_CASE("hostile resize: an extreme aspect ratio is a bad input naming the sizes, not a usage error") {
  Image tall;
  tall.width = 1;
  tall.height = 1000000;
  tall.channels = 1;
  tall.pixels.assign(1000000, 128);
  Image out;
  require_bad_input(resize_shorter_side(tall, 224, Interpolation::kBicubic, &out),
                    {"1x1000000", "224x224000000"});
  Preprocess pp;
  pp.channels = 3;
  pp.resize_shorter = 224;
  pp.crop_w = pp.crop_h = 224;
  pp.mean = {0.5f};
  pp.std = {0.5f};
  std::vector<float> x(3 * 224 * 224);
  require_bad_input(preprocess_image(tall, pp, x.data()), {"1x1000000"});
  // A wide but reasonable image still works: 4000x1 to shorter side 2 is 8000x2.
  Image wide;
  wide.width = 4000;
  wide.height = 1;
  wide.channels = 1;
  wide.pixels.assign(4000, 7);
  REQUIRE(resize_shorter_side(wide, 2, Interpolation::kBilinear, &out).ok());
  CHECK(out.width == 8000);
  CHECK(out.height == 2);
}
