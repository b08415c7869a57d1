// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "common/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace vitrt {

// ---- InputFile ----

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string mib(uint64_t bytes) {
  char buf[48];
  if (bytes % (uint64_t{1} << 30) == 0)
    std::snprintf(buf, sizeof buf, "%llu GiB", static_cast<unsigned long long>(bytes >> 30));
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / 1048576.0);
  return buf;
}

}  // namespace

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status InputFile::open(const std::string& path, const char* what, uint64_t max_bytes) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  size_ = pos_ = 0;
  path_ = path;
  what_ = what;
  // O_NONBLOCK: opening a FIFO with no writer (or a tty, a device) must not wait; fstat then refuses it.
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return io_error("cannot open " + what_ + " '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return io_error("cannot stat " + what_ + " '" + path + "': " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return bad_input(what_ + " '" + path + "' is " + file_kind(st.st_mode) + ", not a regular file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    return bad_input(what_ + " '" + path + "' is " + std::to_string(size) + " bytes, above the limit of " +
                     mib(max_bytes) + " for an " + what_);
  }
  // Regular files never block; clear the flag anyway so reads behave the ordinary way.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  fd_ = fd;
  size_ = size;
  return Status::Ok();
}

Status InputFile::read_exact(void* dst, uint64_t n) {
  if (fd_ < 0) return invalid_argument("InputFile::read_exact: no open file");
  auto* out = static_cast<uint8_t*>(dst);
  uint64_t done = 0;
  while (done < n) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n - done, uint64_t{1} << 30));
    const ssize_t r = ::read(fd_, out + done, chunk);
    if (r < 0) {
      if (errno == EINTR) continue;
      return io_error("error reading " + what_ + " '" + path_ + "': " + std::strerror(errno));
    }
    if (r == 0)
      return bad_input(what_ + " '" + path_ + "' is truncated: it ends at byte " +
                       std::to_string(pos_ + done) + ", " + std::to_string(n - done) +
                       " more bytes were expected");
    done += static_cast<uint64_t>(r);
  }
  pos_ += n;
  return Status::Ok();
}

Status InputFile::expect_end() {
  if (fd_ < 0) return invalid_argument("InputFile::expect_end: no open file");
  uint8_t extra;
  ssize_t r;
  do {
    r = ::read(fd_, &extra, 1);
  } while (r < 0 && errno == EINTR);
  if (r > 0) return bad_input(what_ + " '" + path_ + "' grew while being read");
  return Status::Ok();
}

Status read_input_file(const std::string& path, const char* what, uint64_t max_bytes,
                       std::vector<uint8_t>* bytes) {
  InputFile f;
  VITRT_RETURN_IF_ERROR(f.open(path, what, max_bytes));
  try {
    bytes->resize(static_cast<size_t>(f.size()));
  } catch (const std::bad_alloc&) {
    return bad_input("cannot allocate " + std::to_string(f.size()) + " bytes to read " + what + " '" + path +
                     "'");
  }
  VITRT_RETURN_IF_ERROR(f.read_exact(bytes->data(), f.size()));
  return f.expect_end();
}

// ---- .npy ----

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
  if (p >= h.size()) return false;
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

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// A parsed header whose declared data size has been checked against the file: exactly `data_bytes` bytes
// follow the header and end the file.
struct NpyHeader {
  std::string descr;
  std::vector<int64_t> shape;
  uint64_t numel = 0;
  uint64_t elem = 0;
  uint64_t data_bytes = 0;
};

Status read_npy_header(InputFile& f, NpyHeader* out) {
  const std::string& path = f.path();
  unsigned char magic[8];
  if (f.size() < 10 || !f.read_exact(magic, 8).ok() || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    return bad_input("'" + path + "' is not a .npy file (bad magic)");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    VITRT_RETURN_IF_ERROR(f.read_exact(b, 2));
    header_len = b[0] | (b[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char b[4];
    VITRT_RETURN_IF_ERROR(f.read_exact(b, 4));
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return bad_input("'" + path + "': unsupported .npy version " + std::to_string(magic[6]));
  }
  if (header_len > (1u << 20)) return bad_input("'" + path + "': .npy header too large");
  if (header_len > f.size() - f.offset())
    return bad_input("'" + path + "': truncated .npy header (declares " + std::to_string(header_len) +
                     " bytes, the file has " + std::to_string(f.size() - f.offset()) + " left)");
  std::string header(header_len, '\0');
  VITRT_RETURN_IF_ERROR(f.read_exact(header.data(), header_len));
  std::string descr, order, shape_str;
  if (!header_field(header, "descr", &descr) || !header_field(header, "fortran_order", &order) ||
      !header_field(header, "shape", &shape_str))
    return bad_input("'" + path + "': malformed .npy header");
  out->descr = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;
  if (order.find("True") != std::string::npos)
    return bad_input("'" + path + "': Fortran-ordered arrays are not supported; save with C order");
  if (shape_str.size() < 2 || shape_str.front() != '(' || shape_str.back() != ')')
    return bad_input("'" + path + "': bad shape in .npy header: " + shape_str);
  out->shape.clear();
  for (size_t p = 1; p < shape_str.size();) {
    while (p < shape_str.size() && (shape_str[p] == ' ' || shape_str[p] == ',')) ++p;
    if (p >= shape_str.size() || shape_str[p] == ')') break;
    if (shape_str[p] < '0' || shape_str[p] > '9')
      return bad_input("'" + path + "': bad shape in .npy header: " + shape_str);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(shape_str.c_str() + p, &end, 10);
    if (end == shape_str.c_str() + p || errno == ERANGE || v < 0)
      return bad_input("'" + path + "': bad shape in .npy header: " + shape_str);
    if (out->shape.size() >= static_cast<size_t>(kMaxNpyDims))
      return bad_input("'" + path + "': .npy shape has more than " + std::to_string(kMaxNpyDims) +
                       " dimensions");
    out->shape.push_back(v);
    p = end - shape_str.c_str();
  }
  const std::string& d = out->descr;
  if (d == "<f4" || d == "<i4" || d == "<u4")
    out->elem = 4;
  else if (d == "<f8" || d == "<i8" || d == "<u8")
    out->elem = 8;
  else if (d == "<f2" || d == "<i2" || d == "<u2")
    out->elem = 2;
  else if (d == "|u1" || d == "|i1" || d == "|b1")
    out->elem = 1;
  else
    return bad_input("'" + path + "': unsupported .npy dtype '" + d + "'");
  // The declared byte size, checked: it must neither overflow nor differ from what the file holds. The
  // product of the non-zero dims must stay countable (at most 2^62) too, even where a 0 dim makes the array
  // empty: otherwise a reader that multiplies some of the dims ((1, 8e18, 0, 2e13): H*W, per-image sizes)
  // would overflow.
  constexpr uint64_t kMaxCount = uint64_t{1} << 62;
  uint64_t numel = 1, nonzero = 1;
  for (int64_t v : out->shape) {
    if (v != 0 &&
        (__builtin_mul_overflow(nonzero, static_cast<uint64_t>(v), &nonzero) || nonzero > kMaxCount))
      return bad_input("'" + path + "': .npy shape " + shape_text(out->shape) +
                       " has too many elements to count");
    numel = v == 0 ? 0 : numel * static_cast<uint64_t>(v);  // at most nonzero
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(numel, out->elem, &bytes))
    return bad_input("'" + path + "': .npy shape " + shape_text(out->shape) + " of '" + d +
                     "' declares more bytes than can be counted");
  const uint64_t have = f.size() - f.offset();
  if (bytes > have)
    return bad_input("'" + path + "': truncated .npy data: shape " + shape_text(out->shape) + " of '" + d +
                     "' needs " + std::to_string(bytes) + " bytes, the file has " + std::to_string(have) +
                     " after its header");
  if (bytes < have)
    return bad_input("'" + path + "': " + std::to_string(have - bytes) +
                     " bytes follow the data that shape " + shape_text(out->shape) + " of '" + d +
                     "' declares; the header does not describe this file");
  out->numel = numel;
  out->data_bytes = bytes;
  return Status::Ok();
}

Status open_npy(const std::string& path, InputFile* f, NpyHeader* h) {
  VITRT_RETURN_IF_ERROR(f->open(path, ".npy file", kMaxNpyFileBytes));
  return read_npy_header(*f, h);
}

Status allocation_failed(const std::string& path, const NpyHeader& h, uint64_t bytes) {
  return bad_input("'" + path + "': cannot allocate " + std::to_string(bytes) + " bytes for .npy shape " +
                   shape_text(h.shape) + " of '" + h.descr + "'");
}

// Reads the data of `h` converting element by element (float32 <-> float64), in bounded chunks.
template <typename From, typename To>
Status read_converted(InputFile& f, const NpyHeader& h, std::vector<To>* values) {
  try {
    values->resize(static_cast<size_t>(h.numel));
  } catch (const std::bad_alloc&) {
    return allocation_failed(f.path(), h, h.numel * sizeof(To));
  }
  constexpr size_t kChunk = 8192;
  From buf[kChunk];
  for (uint64_t i = 0; i < h.numel;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, h.numel - i));
    VITRT_RETURN_IF_ERROR(f.read_exact(buf, n * sizeof(From)));
    for (size_t j = 0; j < n; ++j) (*values)[i + j] = static_cast<To>(buf[j]);
    i += n;
  }
  return Status::Ok();
}

template <typename T>
Status read_direct(InputFile& f, const NpyHeader& h, std::vector<T>* values) {
  try {
    values->resize(static_cast<size_t>(h.data_bytes / sizeof(T)));
  } catch (const std::bad_alloc&) {
    return allocation_failed(f.path(), h, h.data_bytes);
  }
  return f.read_exact(values->data(), h.data_bytes);
}

}  // namespace

Status read_npy(const std::string& path, NpyArray* out) {
  InputFile f;
  NpyHeader h;
  VITRT_RETURN_IF_ERROR(open_npy(path, &f, &h));
  out->descr = h.descr;
  out->shape = h.shape;
  return read_direct(f, h, &out->data);
}

Status read_npy_f32(const std::string& path, std::vector<float>* values, std::vector<int64_t>* shape) {
  InputFile f;
  NpyHeader h;
  VITRT_RETURN_IF_ERROR(open_npy(path, &f, &h));
  if (h.descr == "<f4") {
    VITRT_RETURN_IF_ERROR(read_direct(f, h, values));
  } else if (h.descr == "<f8") {
    VITRT_RETURN_IF_ERROR((read_converted<double, float>(f, h, values)));
  } else {
    return bad_input("'" + path + "': expected float32 data, got dtype '" + h.descr + "'");
  }
  *shape = h.shape;
  return Status::Ok();
}

Status read_npy_f64(const std::string& path, std::vector<double>* values, std::vector<int64_t>* shape) {
  InputFile f;
  NpyHeader h;
  VITRT_RETURN_IF_ERROR(open_npy(path, &f, &h));
  if (h.descr == "<f8") {
    VITRT_RETURN_IF_ERROR(read_direct(f, h, values));
  } else if (h.descr == "<f4") {
    VITRT_RETURN_IF_ERROR((read_converted<float, double>(f, h, values)));
  } else {
    return bad_input("'" + path + "': expected float data, got dtype '" + h.descr + "'");
  }
  *shape = h.shape;
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
  const unsigned char pre[10] = {0x93,
                                 'N',
                                 'U',
                                 'M',
                                 'P',
                                 'Y',
                                 1,
                                 0,
                                 static_cast<unsigned char>(header.size() & 0xff),
                                 static_cast<unsigned char>(header.size() >> 8)};
  const size_t bytes = static_cast<size_t>(numel) * sizeof(float);
  if (std::fwrite(pre, 1, 10, f.get()) != 10 ||
      std::fwrite(header.data(), 1, header.size(), f.get()) != header.size() ||
      std::fwrite(values, 1, bytes, f.get()) != bytes)
    return io_error("short write to '" + path + "'");
  if (std::fclose(f.release()) != 0) return io_error("cannot close '" + path + "'");
  return Status::Ok();
}

}  // namespace vitrt
