// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "model_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>

#include "file_checksum.h"
#include "format_version.h"
#include "op_codes.h"
#include "op_options.h"
#include "ops/op_registry.h"
#include "vitrt_generated.h"

namespace vitrt {
namespace {

size_t align_up(size_t v, size_t a) {
  return (v + a - 1) / a * a;
}

struct Layout {
  std::vector<int32_t> buffer_of_tensor;  // 0 for activations
  std::vector<uint64_t> rel_offset;       // per buffer (index 0 = sentinel), relative to the data section
  std::vector<uint64_t> size;
  uint64_t data_bytes = 0;
};

Layout plan_data_section(const Graph& g) {
  Layout l;
  l.buffer_of_tensor.assign(g.tensors.size(), 0);
  l.rel_offset.push_back(0);
  l.size.push_back(0);
  uint64_t cursor = 0;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    if (!t.is_constant) continue;
    cursor = align_up(cursor, kDataAlignment);
    l.buffer_of_tensor[i] = static_cast<int32_t>(l.rel_offset.size());
    l.rel_offset.push_back(cursor);
    l.size.push_back(t.constant.size);
    cursor += t.constant.size;
  }
  l.data_bytes = cursor;
  return l;
}

// Builds the flatbuffer with buffer offsets relative to `data_start`.
void build_flatbuffer(const Graph& g, const Layout& l, uint64_t data_start,
                      flatbuffers::FlatBufferBuilder* fbb) {
  fbb->Clear();
  fbb->ForceDefaults(true);  // same size whatever the values, so the two-pass layout is stable
  // Operator codes: one per (type, version) in order of first use.
  std::vector<std::pair<OpType, int32_t>> codes;
  std::vector<uint32_t> code_of_node;
  for (const Node& n : g.nodes) {
    uint32_t idx = 0;
    while (idx < codes.size() && !(codes[idx].first == n.type && codes[idx].second == n.version)) ++idx;
    if (idx == codes.size()) codes.emplace_back(n.type, n.version);
    code_of_node.push_back(idx);
  }
  std::vector<flatbuffers::Offset<fb::OperatorCode>> fb_codes;
  for (const auto& c : codes) {
    OpCode code;
    op_code_of(c.first, &code);  // check_writable has refused every op without a code
    fb_codes.push_back(fb::CreateOperatorCode(*fbb, code.builtin, c.second));
  }

  std::vector<flatbuffers::Offset<fb::Tensor>> fb_tensors;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    fb_tensors.push_back(fb::CreateTensor(*fbb, fbb->CreateString(t.name), static_cast<fb::DType>(t.dtype),
                                          fbb->CreateVector(t.shape.to_vector()),
                                          static_cast<uint32_t>(l.buffer_of_tensor[i])));
  }
  std::vector<flatbuffers::Offset<fb::Operator>> fb_ops;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const EncodedOptions opts = encode_op_options(*fbb, n);
    fb_ops.push_back(fb::CreateOperator(*fbb, code_of_node[i], fbb->CreateVector(n.inputs),
                                        fbb->CreateVector(n.outputs), opts.type, opts.offset,
                                        fbb->CreateString(n.name)));
  }
  auto graph = fb::CreateGraph(*fbb, fbb->CreateVector(fb_tensors), fbb->CreateVector(fb_ops),
                               fbb->CreateVector(g.inputs), fbb->CreateVector(g.outputs));
  std::vector<fb::Buffer> buffers;
  buffers.emplace_back(0, 0);  // the empty sentinel
  for (size_t b = 1; b < l.rel_offset.size(); ++b)
    buffers.emplace_back(data_start + l.rel_offset[b], l.size[b]);

  const ModelMetadata& m = g.metadata;
  std::vector<flatbuffers::Offset<flatbuffers::String>> labels;
  for (const auto& s : m.labels) labels.push_back(fbb->CreateString(s));
  const Preprocess& p = m.preprocess;
  auto pre = fb::CreatePreprocess(*fbb, p.resize_shorter, p.crop_h, p.crop_w,
                                  static_cast<fb::Interpolation>(p.interpolation), fbb->CreateVector(p.mean),
                                  fbb->CreateVector(p.std), p.channels);
  std::vector<flatbuffers::Offset<fb::KeyValue>> kvs;
  for (const auto& kv : m.extra)  // std::map: sorted, as the (key) attribute requires
    kvs.push_back(fb::CreateKeyValue(*fbb, fbb->CreateString(kv.first), fbb->CreateString(kv.second)));
  auto model = fb::CreateModel(*fbb, kFormatVersion, fbb->CreateString(m.producer), fbb->CreateString(m.arch),
                               fbb->CreateVector(fb_codes), graph, fbb->CreateVectorOfStructs(buffers),
                               fbb->CreateVector(labels), pre, fbb->CreateVector(kvs));
  fb::FinishSizePrefixedModelBuffer(*fbb, model);
}

Status check_writable(const Graph& g) {
  VITRT_RETURN_IF_ERROR(g.validate_structure());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    OpCode code;
    if (!op_code_of(g.nodes[i].type, &code))
      return invalid_argument(
          describe_node(g.nodes[i], i) +
          ": this op is made by the planner inside a session and has no code in the model "
          "format (docs/format.md); write the graph before planning");
  }
  for (const Tensor& t : g.tensors) {
    if (!t.is_constant) continue;
    int64_t n;
    if (!checked_numel(t.shape, &n) || static_cast<uint64_t>(n) * dtype_size(t.dtype) != t.constant.size ||
        (t.constant.size && !t.constant.data))
      return invalid_argument("constant '" + t.name + "' has " + std::to_string(t.constant.size) +
                              " bytes, which does not match its shape " + t.shape.str() + " and dtype " +
                              dtype_name(t.dtype));
  }
  return Status::Ok();
}

// Hands each piece of the file after the flatbuffer (zero gaps and weights) to `emit`, in file order.
bool emit_data(const Graph& g, const Layout& l, uint64_t gap_before_data,
               const std::function<bool(const void*, size_t)>& emit) {
  static const uint8_t kZeros[kDataAlignment] = {};
  if (!emit(kZeros, gap_before_data)) return false;
  uint64_t pos = 0;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const int32_t b = l.buffer_of_tensor[i];
    if (b == 0) continue;
    if (!emit(kZeros, l.rel_offset[b] - pos) || !emit(g.tensors[i].constant.data, l.size[b])) return false;
    pos = l.rel_offset[b] + l.size[b];
  }
  return true;
}

// Lays the file out, fills in the checksum, and hands each piece to `emit` in file order.
Status emit_file(const Graph& g, const std::function<bool(const void*, size_t)>& emit) {
  VITRT_RETURN_IF_ERROR(check_writable(g));
  const Layout l = plan_data_section(g);
  flatbuffers::FlatBufferBuilder fbb(1 << 16);
  build_flatbuffer(g, l, 0, &fbb);
  const size_t fb_size = fbb.GetSize();
  const uint64_t data_start = align_up(fb_size, kDataAlignment);
  build_flatbuffer(g, l, data_start, &fbb);
  if (fbb.GetSize() != fb_size) return runtime_error("model writer: flatbuffer size changed between passes");
  fb::Model* model = fb::GetMutableSizePrefixedModel(fbb.GetBufferPointer());
  const uint8_t* field = crc32_field_address(model);
  if (!field) return runtime_error("model writer: crc32 field not stored");
  FileChecksum crc(static_cast<size_t>(field - fbb.GetBufferPointer()));
  crc.update(fbb.GetBufferPointer(), fb_size);
  emit_data(g, l, data_start - fb_size, [&crc](const void* p, size_t n) {
    crc.update(p, n);
    return true;
  });
  model->mutate_crc32(crc.value());
  if (!emit(fbb.GetBufferPointer(), fb_size) || !emit_data(g, l, data_start - fb_size, emit))
    return io_error("write failed");
  return Status::Ok();
}

}  // namespace

Status write_model_memory(const Graph& graph, std::vector<uint8_t>* out) {
  out->clear();
  return emit_file(graph, [out](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out->insert(out->end(), b, b + n);
    return true;
  });
}

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// Ok when `path` does not exist or is a regular file (checked without following a symlink).
Status check_target(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return io_error("cannot inspect '" + path + "': " + std::strerror(errno));
  }
  if (S_ISREG(st.st_mode)) return Status::Ok();
  return invalid_argument("'" + path + "' exists and is " + file_kind(st.st_mode) +
                          ", not a regular file; refusing to replace it");
}

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A temporary this process created (O_EXCL); removed when destroyed unless released. It is the only file the
// writer ever removes.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    close_fd();
    if (still_ours()) ::unlink(path_.c_str());
  }

  // Creates "<dir>.<base>.<random>.tmp" next to the target. The names are unpredictable, and
  // O_EXCL|O_NOFOLLOW refuses anything already there (a planted file or symlink) instead of writing through
  // it; the mode is 0666 less the umask, as for any new file.
  Status create(const std::string& dir, const std::string& base) {
    static std::atomic<uint64_t> counter{0};
    const uint64_t seed =
        mix64(static_cast<uint64_t>(::getpid()) << 32 ^
              static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
              reinterpret_cast<uintptr_t>(this));
    static const char* hex = "0123456789abcdef";
    for (int attempt = 0; attempt < 64; ++attempt) {
      uint64_t r = mix64(seed + counter.fetch_add(1) * 0x2545F4914F6CDD1Dull);
      std::string name = dir + "." + base.substr(0, 200) + ".";
      for (int k = 0; k < 12; ++k, r >>= 4) name += hex[r & 15];
      name += ".tmp";
      const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd >= 0) {
        struct stat st;
        if (::fstat(fd, &st) != 0) {
          ::close(fd);
          ::unlink(name.c_str());
          return io_error("cannot inspect the temporary '" + name + "': " + std::strerror(errno));
        }
        fd_ = fd;
        path_ = name;
        dev_ = st.st_dev;
        ino_ = st.st_ino;
        return Status::Ok();
      }
      if (errno != EEXIST)
        return io_error("cannot create a temporary file in '" + (dir.empty() ? std::string(".") : dir) +
                        "': " + std::strerror(errno));
    }
    return io_error("cannot create a temporary file in '" + (dir.empty() ? std::string(".") : dir) +
                    "': every name tried exists");
  }

  bool write(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd_, b, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error_ = w < 0 ? errno : ENOSPC;
        return false;
      }
      b += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  // Flushes to disk and closes; false (errno set) on failure.
  bool finish() {
    if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) return false;  // EINVAL: no fsync (pipes..)
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

  // Moves the file to `target`; from then on it is no longer ours to remove.
  bool rename_to(const std::string& target) {
    if (!still_ours()) {
      errno = ESTALE;
      return false;
    }
    if (std::rename(path_.c_str(), target.c_str()) != 0) return false;
    path_.clear();
    return true;
  }

  const std::string& path() const { return path_; }
  int write_error() const { return error_; }

 private:
  // Whether the name still holds the file created (not something put there since, which is not ours to
  // remove).
  bool still_ours() const {
    struct stat st;
    return !path_.empty() && ::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
  }
  void close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
  int error_ = 0;
  std::string path_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

Status write_checked(const Graph& graph, const std::string& path, const ModelFileCheck& check) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty() || base == "." || base == "..")
    return invalid_argument("'" + path + "' names a directory, not a file");
  VITRT_RETURN_IF_ERROR(check_target(path));  // fail before the work when the target is unusable
  TempFile tmp;
  VITRT_RETURN_IF_ERROR(tmp.create(dir, base));
  Status st = emit_file(graph, [&tmp](const void* p, size_t n) { return tmp.write(p, n); });
  if (!st.ok() && tmp.write_error())
    return io_error("cannot write '" + tmp.path() + "' (removed): " + std::strerror(tmp.write_error()));
  VITRT_RETURN_IF_ERROR(st);
  if (!tmp.finish()) return io_error("cannot write '" + tmp.path() + "' (removed): " + std::strerror(errno));
  if (check) {
    st = check(tmp.path());
    if (!st.ok())
      return st.with_context("the written model ('" + tmp.path() + "', now removed) does not verify");
  }
  VITRT_RETURN_IF_ERROR(check_target(path));  // it may have changed while the model was written
  if (!tmp.rename_to(path))
    return io_error("cannot rename '" + tmp.path() + "' to '" + path + "': " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace

Status check_model_output_path(const std::string& path) {
  return check_target(path);
}

Status write_model_file(const Graph& graph, const std::string& path, const ModelFileCheck& check) {
  Status st;
  try {
    st = write_checked(graph, path, check);
  } catch (const std::bad_alloc&) {
    st = out_of_memory("out of memory");
  }
  return st.with_context("writing '" + path + "'");
}

}  // namespace vitrt
