// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "common/npy.h"

#include <cstdio>
#include <cstring>
#include <memory>

namespace vitrt {
namespace {

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<FILE, FileCloser>;

// Extracts the value text after 'key': in a numpy header dict.
bool header_field(const std::string& h, const std::string& key, std::string* value) {
  const size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) return false;
  size_t p = h.find(':', k);
  if (p == std::string::npos) return false;
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  size_t e;
  if (h[p] == '(') {
    e = h.find(')', p);
    if (e == std::string::npos) return false;
    ++e;
  } else if (h[p] == '\'') {
    e = h.find('\'', p + 1);
    if (e == std::string::npos) return false;
    ++e;
  } else {
    e = h.find_first_of(",}", p);
    if (e == std::string::npos) return false;
  }
  *value = h.substr(p, e - p);
  return true;
}

}  // namespace

Status read_npy(const std::string& path, NpyArray* out) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  unsigned char magic[8];
  if (std::fread(magic, 1, 8, f.get()) != 8 || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return bad_input("'" + path + "' is not a .npy file (bad magic)");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (std::fread(b, 1, 2, f.get()) != 2) return bad_input("'" + path + "': truncated .npy header");
    header_len = b[0] | (b[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char b[4];
    if (std::fread(b, 1, 4, f.get()) != 4) return bad_input("'" + path + "': truncated .npy header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return bad_input("'" + path + "': unsupported .npy version " + std::to_string(magic[6]));
  }
  if (header_len > (1u << 20)) return bad_input("'" + path + "': .npy header too large");
  std::string header(header_len, '\0');
  if (std::fread(header.data(), 1, header_len, f.get()) != header_len)
    return bad_input("'" + path + "': truncated .npy header");
  std::string descr, order, shape_text;
  if (!header_field(header, "descr", &descr) || !header_field(header, "fortran_order", &order) ||
      !header_field(header, "shape", &shape_text))
    return bad_input("'" + path + "': malformed .npy header");
  out->descr = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;
  if (order.find("True") != std::string::npos)
    return bad_input("'" + path + "': Fortran-ordered arrays are not supported; save with C order");
  out->shape.clear();
  int64_t numel = 1;
  for (size_t p = 1; p < shape_text.size();) {
    while (p < shape_text.size() && (shape_text[p] == ' ' || shape_text[p] == ',')) ++p;
    if (p >= shape_text.size() || shape_text[p] == ')') break;
    char* end = nullptr;
    const long long v = std::strtoll(shape_text.c_str() + p, &end, 10);
    if (end == shape_text.c_str() + p || v < 0) return bad_input("'" + path + "': bad shape in .npy header");
    out->shape.push_back(v);
    if (v != 0 && numel > (int64_t{1} << 40) / v) return bad_input("'" + path + "': array too large");
    numel *= v;
    p = end - shape_text.c_str();
  }
  size_t elem = 0;
  const std::string& d = out->descr;
  if (d == "<f4" || d == "<i4" || d == "<u4") elem = 4;
  else if (d == "<f8" || d == "<i8" || d == "<u8") elem = 8;
  else if (d == "<f2" || d == "<i2" || d == "<u2") elem = 2;
  else if (d == "|u1" || d == "|i1" || d == "|b1") elem = 1;
  else return bad_input("'" + path + "': unsupported .npy dtype '" + d + "'");
  out->data.resize(static_cast<size_t>(numel) * elem);
  if (std::fread(out->data.data(), 1, out->data.size(), f.get()) != out->data.size())
    return bad_input("'" + path + "': truncated .npy data (expected " + std::to_string(out->data.size()) + " bytes)");
  return Status::Ok();
}

Status read_npy_f32(const std::string& path, std::vector<float>* values, std::vector<int64_t>* shape) {
  NpyArray a;
  VITRT_RETURN_IF_ERROR(read_npy(path, &a));
  *shape = a.shape;
  if (a.descr == "<f4") {
    values->resize(a.data.size() / 4);
    std::memcpy(values->data(), a.data.data(), a.data.size());
  } else if (a.descr == "<f8") {
    values->resize(a.data.size() / 8);
    const double* src = reinterpret_cast<const double*>(a.data.data());
    for (size_t i = 0; i < values->size(); ++i) (*values)[i] = static_cast<float>(src[i]);
  } else {
    return bad_input("'" + path + "': expected float32 data, got dtype '" + a.descr + "'");
  }
  return Status::Ok();
}

Status read_npy_f64(const std::string& path, std::vector<double>* values, std::vector<int64_t>* shape) {
  NpyArray a;
  VITRT_RETURN_IF_ERROR(read_npy(path, &a));
  *shape = a.shape;
  if (a.descr == "<f8") {
    values->resize(a.data.size() / 8);
    std::memcpy(values->data(), a.data.data(), a.data.size());
  } else if (a.descr == "<f4") {
    values->resize(a.data.size() / 4);
    const float* src = reinterpret_cast<const float*>(a.data.data());
    for (size_t i = 0; i < values->size(); ++i) (*values)[i] = src[i];
  } else {
    return bad_input("'" + path + "': expected float data, got dtype '" + a.descr + "'");
  }
  return Status::Ok();
}

Status write_npy_f32(const std::string& path, const float* values, const std::vector<int64_t>& shape) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  int64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    header += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) header += ",";
    if (i + 1 < shape.size()) header += " ";
    numel *= shape[i];
  }
  header += "), }";
  // Pad so that the data starts on a 64-byte boundary (10-byte preamble, header ends with '\n').
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) return io_error("cannot write '" + path + "': " + std::strerror(errno));
  const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                 static_cast<unsigned char>(header.size() & 0xff),
                                 static_cast<unsigned char>(header.size() >> 8)};
  const size_t bytes = static_cast<size_t>(numel) * sizeof(float);
  if (std::fwrite(pre, 1, 10, f.get()) != 10 || std::fwrite(header.data(), 1, header.size(), f.get()) != header.size() ||
      std::fwrite(values, 1, bytes, f.get()) != bytes)
    return io_error("short write to '" + path + "'");
  if (std::fclose(f.release()) != 0) return io_error("cannot close '" + path + "'");
  return Status::Ok();
}

}  // namespace vitrt
