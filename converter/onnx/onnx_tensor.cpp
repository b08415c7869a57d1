// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/onnx_tensor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/checked_math.h"
#include "onnx/onnx_limits.h"

namespace vitrt::convert {
namespace {

using TP = onnx::TensorProto;

int element_bytes(int32_t type) {
  switch (type) {
    case TP::FLOAT:
    case TP::INT32:
    case TP::UINT32:
      return 4;
    case TP::DOUBLE:
    case TP::INT64:
    case TP::UINT64:
      return 8;
    case TP::FLOAT16:
    case TP::BFLOAT16:
    case TP::INT16:
    case TP::UINT16:
      return 2;
    case TP::INT8:
    case TP::UINT8:
    case TP::BOOL:
      return 1;
    default:
      return 0;
  }
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 31, man = h & 1023;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31)
    v = man ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(man | 1024), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

float bf16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

bool is_float_type(int32_t t) {
  return t == TP::FLOAT || t == TP::DOUBLE || t == TP::FLOAT16 || t == TP::BFLOAT16;
}

// Sizes the value's storage for `n` elements: only once the file (or the external file) is known to hold
// them.
void size_values(int64_t n, OnnxValue* v) {
  if (v->kind == ConstKind::kFloat)
    v->f.resize(static_cast<size_t>(n));
  else
    v->i.resize(static_cast<size_t>(n));
}

// Decodes `n` little-endian elements of `type` from `raw` into the value.
void decode_raw(const uint8_t* raw, int64_t n, int32_t type, OnnxValue* v) {
  for (int64_t e = 0; e < n; ++e) {
    const uint8_t* p = raw + e * element_bytes(type);
    switch (type) {
      case TP::FLOAT: {
        float x;
        std::memcpy(&x, p, 4);
        v->f[e] = x;
        break;
      }
      case TP::DOUBLE: {
        double x;
        std::memcpy(&x, p, 8);
        v->f[e] = static_cast<float>(x);
        break;
      }
      case TP::FLOAT16:
      case TP::BFLOAT16: {
        uint16_t x;
        std::memcpy(&x, p, 2);
        v->f[e] = type == TP::FLOAT16 ? half_to_float(x) : bf16_to_float(x);
        break;
      }
      case TP::INT64:
      case TP::UINT64: {
        int64_t x;
        std::memcpy(&x, p, 8);
        v->i[e] = SymDim::of(x);
        break;
      }
      case TP::INT32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v->i[e] = SymDim::of(x);
        break;
      }
      case TP::UINT32: {
        uint32_t x;
        std::memcpy(&x, p, 4);
        v->i[e] = SymDim::of(x);
        break;
      }
      case TP::INT16: {
        int16_t x;
        std::memcpy(&x, p, 2);
        v->i[e] = SymDim::of(x);
        break;
      }
      case TP::UINT16: {
        uint16_t x;
        std::memcpy(&x, p, 2);
        v->i[e] = SymDim::of(x);
        break;
      }
      case TP::INT8:
        v->i[e] = SymDim::of(static_cast<int8_t>(*p));
        break;
      default:  // UINT8, BOOL
        v->i[e] = SymDim::of(*p);
        break;
    }
  }
}

// Whether `dir` (resolved) contains `path` (resolved).
bool inside(const std::string& dir, const std::string& path) {
  if (dir == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > dir.size() + 1 && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

Status read_external(const TP& t, const std::string& what, ExternalDataContext* ext, int64_t n,
                     OnnxValue* v) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool has_length = false;
  for (const auto& kv : t.external_data()) {
    char* end = nullptr;
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      errno = 0;
      const unsigned long long x = std::strtoull(kv.value().c_str(), &end, 10);
      if (kv.value().empty() || *end || errno || kv.value()[0] == '-')
        return bad_input(what + ": external data " + kv.key() + " '" + kv.value() + "' is not a number");
      (kv.key() == "offset" ? offset : length) = x;
      has_length |= kv.key() == "length";
    }
  }
  if (ext->model_dir.empty())
    return bad_input(what + ": external data needs the model's directory (the model was read from memory)");
  std::string path;
  VITRT_RETURN_IF_ERROR(resolve_external_path(ext->model_dir, location, &path).with_context(what));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return bad_input(what + ": cannot open external data file '" + location + "'");
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return bad_input(what + ": external data '" + location + "' is not a regular file");
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  const uint64_t want = static_cast<uint64_t>(n) * static_cast<uint64_t>(element_bytes(t.data_type()));
  if (has_length && length != want) {
    ::close(fd);
    return bad_input(what + ": external data length " + std::to_string(length) + " but the tensor " +
                     int_dims_str(v->shape) + " of " + onnx_type_name(t.data_type()) + " needs " +
                     std::to_string(want) + " bytes");
  }
  if (offset > file_size || want > file_size - offset) {
    ::close(fd);
    return bad_input(what + ": external data [" + std::to_string(offset) + ", +" + std::to_string(want) +
                     ") lies outside '" + location + "' (" + std::to_string(file_size) + " bytes)");
  }
  if (want > kMaxExternalBytes - ext->bytes_read) {
    ::close(fd);
    return bad_input(what + ": external data would exceed the " + std::to_string(kMaxExternalBytes >> 30) +
                     " GiB limit on all external data of a model");
  }
  ext->bytes_read += want;
  std::vector<uint8_t> raw(static_cast<size_t>(want));
  size_values(n, v);
  size_t done = 0;
  while (done < raw.size()) {
    const ssize_t r = ::pread(fd, raw.data() + done, raw.size() - done, static_cast<off_t>(offset + done));
    if (r <= 0) break;
    done += static_cast<size_t>(r);
  }
  ::close(fd);
  if (done != raw.size()) return io_error(what + ": short read of external data '" + location + "'");
  decode_raw(raw.data(), n, t.data_type(), v);
  return Status::Ok();
}

}  // namespace

std::string onnx_type_name(int32_t type) {
  if (onnx::TensorProto_DataType_IsValid(type))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(type));
  return "type " + std::to_string(type);
}

Status resolve_external_path(const std::string& model_dir, const std::string& location, std::string* path) {
  if (location.empty()) return bad_input("external data has no location");
  // A NUL ends the name open() sees (and would print raw in this message): refused, not cut short.
  if (const size_t nul = location.find('\0'); nul != std::string::npos)
    return bad_input("external data location holds a NUL byte at position " + std::to_string(nul) +
                     "; a file name cannot");
  if (location[0] == '/')
    return bad_input("external data location '" + location +
                     "' is an absolute path; it must be relative to the model's directory");
  size_t p = 0;
  while (p <= location.size()) {
    size_t e = location.find('/', p);
    if (e == std::string::npos) e = location.size();
    if (location.compare(p, e - p, "..") == 0 && e - p == 2)
      return bad_input("external data location '" + location + "' leaves the model's directory ('..')");
    p = e + 1;
  }
  char dir_real[PATH_MAX], file_real[PATH_MAX];
  if (!::realpath(model_dir.c_str(), dir_real))
    return io_error("cannot resolve the model's directory '" + model_dir + "'");
  const std::string joined = model_dir + "/" + location;
  if (!::realpath(joined.c_str(), file_real))
    return bad_input("external data file '" + location + "' does not exist next to the model");
  if (std::string(file_real) == dir_real)
    return bad_input("external data location '" + location + "' is the model's directory, not a file in it");
  if (!inside(dir_real, file_real))
    return bad_input("external data location '" + location + "' resolves to '" + file_real +
                     "', outside the model's directory (a symlink leaving it)");
  *path = file_real;
  return Status::Ok();
}

Status tensor_to_value(const TP& t, const std::string& what, ExternalDataContext* ext, OnnxValue* out) {
  OnnxValue v;
  v.is_const = true;
  v.onnx_type = t.data_type();
  const int eb = element_bytes(t.data_type());
  if (!eb) return unsupported(what + ": tensors of " + onnx_type_name(t.data_type()) + " are not supported");
  v.kind = is_float_type(t.data_type()) ? ConstKind::kFloat : ConstKind::kInt;
  // Bounded is the product of the non-zero dimensions, not just the element count: an empty tensor such as
  // [0, 2^62, 2^62] holds no element, but the folding's strides and shape products would overflow on it.
  int64_t n = 1, nonzero = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return bad_input(what + ": negative dimension " + std::to_string(d));
    if (d != 0 && (!checked_mul(nonzero, d, &nonzero) || nonzero > kMaxOnnxTensorElements))
      return bad_input(what + ": shape " + int_dims_str({t.dims().begin(), t.dims().end()}) +
                       " has more than " + std::to_string(kMaxOnnxTensorElements) +
                       " elements (counting its non-zero dimensions)");
    n = d == 0 ? 0 : n * d;
    v.shape.push_back(d);
  }
  if (t.dims_size() > 8) return unsupported(what + ": rank " + std::to_string(t.dims_size()) + " > 8");
  const bool external = t.data_location() == TP::EXTERNAL;
  // The element count must be backed by bytes the file (or the external file) really has before we allocate.
  const uint64_t need = static_cast<uint64_t>(n) * static_cast<uint64_t>(eb);
  int64_t typed = 0;
  switch (t.data_type()) {
    case TP::FLOAT:
      typed = t.float_data_size();
      break;
    case TP::DOUBLE:
      typed = t.double_data_size();
      break;
    case TP::INT64:
      typed = t.int64_data_size();
      break;
    case TP::UINT32:
    case TP::UINT64:
      typed = t.uint64_data_size();
      break;
    default:
      typed = t.int32_data_size();
  }
  if (!external) {
    if (t.has_raw_data()) {
      if (t.raw_data().size() != need)
        return bad_input(what + ": raw data has " + std::to_string(t.raw_data().size()) + " bytes, but " +
                         int_dims_str(v.shape) + " of " + onnx_type_name(t.data_type()) + " needs " +
                         std::to_string(need));
    } else if (typed != n) {
      return bad_input(what + ": holds " + std::to_string(typed) + " values, but its shape " +
                       int_dims_str(v.shape) + " needs " + std::to_string(n) +
                       (typed == 0 ? " (a missing or empty initializer)" : ""));
    }
  }
  // An external tensor's values are sized in read_external, after its file is known to hold them: sizing them
  // here let a 300-byte model naming a 48-byte file as a [65536, 65536] tensor allocate and zero 16 GiB
  // first.
  if (!external) size_values(n, &v);
  if (external) {
    VITRT_RETURN_IF_ERROR(read_external(t, what, ext, n, &v));
  } else if (t.has_raw_data()) {
    decode_raw(reinterpret_cast<const uint8_t*>(t.raw_data().data()), n, t.data_type(), &v);
  } else {
    for (int64_t e = 0; e < n; ++e) {
      switch (t.data_type()) {
        case TP::FLOAT:
          v.f[e] = t.float_data(static_cast<int>(e));
          break;
        case TP::DOUBLE:
          v.f[e] = static_cast<float>(t.double_data(static_cast<int>(e)));
          break;
        case TP::FLOAT16:
          v.f[e] = half_to_float(static_cast<uint16_t>(t.int32_data(static_cast<int>(e))));
          break;
        case TP::BFLOAT16:
          v.f[e] = bf16_to_float(static_cast<uint16_t>(t.int32_data(static_cast<int>(e))));
          break;
        case TP::INT64:
          v.i[e] = SymDim::of(t.int64_data(static_cast<int>(e)));
          break;
        case TP::UINT32:
        case TP::UINT64:
          v.i[e] = SymDim::of(static_cast<int64_t>(t.uint64_data(static_cast<int>(e))));
          break;
        default:
          v.i[e] = SymDim::of(t.int32_data(static_cast<int>(e)));
      }
    }
  }
  *out = std::move(v);
  return Status::Ok();
}

void release_tensor_data(TP* t) {
  // clear_*() keeps the capacity; swapping with empty containers frees it.
  std::string().swap(*t->mutable_raw_data());
  t->clear_raw_data();
  google::protobuf::RepeatedField<float>().Swap(t->mutable_float_data());
  google::protobuf::RepeatedField<double>().Swap(t->mutable_double_data());
  google::protobuf::RepeatedField<int32_t>().Swap(t->mutable_int32_data());
  google::protobuf::RepeatedField<int64_t>().Swap(t->mutable_int64_data());
  google::protobuf::RepeatedField<uint64_t>().Swap(t->mutable_uint64_data());
}

std::string sym_dims_str(const std::vector<SymDim>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + d[i].str();
  return s + "]";
}

std::string int_dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace vitrt::convert
