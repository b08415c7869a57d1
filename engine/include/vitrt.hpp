// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
//
// vitrt.hpp — header-only C++17 RAII wrapper over the C API (vitrt.h). Nothing here is compiled into the
// library, so the ABI stays the C one. Failures throw vitrt::api::Error, which carries the C status code and
// the library's message (naming the file, tensor or op involved). Buffers are passed as Span (pointer + size,
// from a std::vector or a raw pointer), checked against what the call needs.
//
//   vitrt::api::Model model = vitrt::api::Model::load("deit_tiny.vitrt");
//   vitrt::api::SessionOptions opts;
//   opts.max_batch = 8;
//   vitrt::api::Session session(model, opts);
//   std::vector<float> x = vitrt::api::preprocess_image(model, "cat.png");   // [C,H,W]
//   std::vector<float> logits = session.run(x.data(), 1);                   // [1, classes]
//
// Thread safety is the C API's: a Model may be shared by any number of threads; a Session is used by one
// thread at a time.
#ifndef VITRT_HPP_
#define VITRT_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "vitrt.h"

namespace vitrt {
namespace api {

// A failed call: status() is the C API's code, what() the library's message.
class Error : public std::runtime_error {
 public:
  Error(vitrt_status_t status, const std::string& message) : std::runtime_error(message), status_(status) {}
  vitrt_status_t status() const noexcept { return status_; }

 private:
  vitrt_status_t status_;
};

namespace detail {
inline void check(vitrt_status_t status) {
  if (status != VITRT_OK) throw Error(status, vitrt_last_error_message());
}
inline std::string str(const char* s) {
  return s ? s : "";
}
// An info struct with its struct_size set, for the C API to fill.
template <typename Info>
Info info_struct() {
  Info i{};
  i.struct_size = sizeof(Info);
  return i;
}
}  // namespace detail

// A view of contiguous elements (C++17 has no std::span): a pointer and a count, from a vector or raw memory.
template <typename T>
class Span {
 public:
  Span() = default;
  Span(T* data, size_t size) : data_(data), size_(size) {}
  template <typename U, typename = std::enable_if_t<std::is_convertible<U*, T*>::value>>
  Span(std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT: implicit, like std::span
  template <typename U, typename = std::enable_if_t<std::is_convertible<const U*, T*>::value>>
  Span(const std::vector<U>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  T* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  T* begin() const noexcept { return data_; }
  T* end() const noexcept { return data_ + size_; }
  T& operator[](size_t i) const { return data_[i]; }
  // Elements [offset, offset + count), clamped to the span.
  Span subspan(size_t offset, size_t count) const {
    offset = offset < size_ ? offset : size_;
    return Span(data_ + offset, count < size_ - offset ? count : size_ - offset);
  }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// The exit code the command-line tools report for a status (vitrt_exit_code).
inline int exit_code(vitrt_status_t status) {
  return vitrt_exit_code(status);
}

// The backend named "auto", "cpu", "ref" or "cuda" (Error for another name).
inline vitrt_backend_t backend_from_name(const std::string& name) {
  vitrt_backend_t b = VITRT_BACKEND_AUTO;
  detail::check(vitrt_backend_from_name(name.c_str(), &b));
  return b;
}

// The precision named "fp32" or "bf16" (Error for another name).
inline vitrt_precision_t precision_from_name(const std::string& name) {
  vitrt_precision_t p = VITRT_PRECISION_FP32;
  detail::check(vitrt_precision_from_name(name.c_str(), &p));
  return p;
}

// Limits on untrusted input files (vitrt_input_limits_t).
inline vitrt_input_limits_t input_limits() {
  auto l = detail::info_struct<vitrt_input_limits_t>();
  detail::check(vitrt_get_input_limits(&l));
  return l;
}

struct InputShape {
  int32_t channels = 0, height = 0, width = 0;
  size_t elements() const { return static_cast<size_t>(channels) * height * width; }
};

// What `vitrt inspect` prints about a model file (vitrt_model_info_t); dims hold -1 for the batch dimension.
struct ModelInfo {
  uint32_t format_version = 0;
  std::string producer, arch, input_dtype;
  std::vector<int64_t> input_dims, output_dims;
  int32_t num_classes = 0, num_labels = 0, num_ops = 0, num_tensors = 0, num_weights = 0, num_metadata = 0;
  uint64_t weight_bytes = 0;
};

// The model's evaluation preprocessing (vitrt_preprocess_info_t).
struct Preprocessing {
  int32_t channels = 0, resize_shorter = 0, crop_height = 0, crop_width = 0;
  std::string interpolation;  // "bicubic", "bilinear" or "nearest"
  std::vector<float> mean, std;
};

// An immutable, loaded and verified model. Move-only; freed on destruction.
class Model {
 public:
  // Memory-maps and verifies a .vitrt file.
  static Model load(const std::string& path) {
    vitrt_model_t* m = nullptr;
    detail::check(vitrt_model_load(path.c_str(), &m));
    return Model(m);
  }
  // Uses caller memory in place: `data` must be 64-byte aligned and outlive the model and its sessions.
  static Model from_memory(const void* data, size_t size) {
    vitrt_model_t* m = nullptr;
    detail::check(vitrt_model_load_from_memory(data, size, &m));
    return Model(m);
  }

  Model(Model&& o) noexcept : model_(std::exchange(o.model_, nullptr)) {}
  Model& operator=(Model&& o) noexcept {
    if (this != &o) {
      vitrt_model_free(model_);
      model_ = std::exchange(o.model_, nullptr);
    }
    return *this;
  }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model() { vitrt_model_free(model_); }

  InputShape input_shape() const {
    InputShape s;
    detail::check(vitrt_model_input_shape(model_, &s.channels, &s.height, &s.width));
    return s;
  }
  int32_t num_classes() const { return vitrt_model_num_classes(model_); }
  // The label of class `index`, or "" when the model has none for it.
  std::string label(int32_t index) const {
    const char* l = vitrt_model_label(model_, index);
    return l ? l : "";
  }
  std::string arch() const {
    const char* a = vitrt_model_arch(model_);
    return a ? a : "";
  }
  // A metadata value, or `fallback` when the key is absent.
  std::string metadata(const std::string& key, const std::string& fallback = "") const {
    const char* v = vitrt_model_metadata(model_, key.c_str());
    return v ? v : fallback;
  }
  ModelInfo info() const {
    auto c = detail::info_struct<vitrt_model_info_t>();
    detail::check(vitrt_model_get_info(model_, &c));
    ModelInfo i;
    i.format_version = c.format_version;
    i.producer = detail::str(c.producer);
    i.arch = detail::str(c.arch);
    i.input_dtype = detail::str(c.input_dtype);
    i.input_dims.assign(c.input_dims, c.input_dims + c.input_rank);
    i.output_dims.assign(c.output_dims, c.output_dims + c.output_rank);
    i.num_classes = c.num_classes;
    i.num_labels = c.num_labels;
    i.num_ops = c.num_ops;
    i.num_tensors = c.num_tensors;
    i.num_weights = c.num_weights;
    i.weight_bytes = c.weight_bytes;
    i.num_metadata = c.num_metadata;
    return i;
  }
  Preprocessing preprocessing() const {
    auto c = detail::info_struct<vitrt_preprocess_info_t>();
    detail::check(vitrt_model_get_preprocess(model_, &c));
    Preprocessing p;
    p.channels = c.channels;
    p.resize_shorter = c.resize_shorter;
    p.crop_height = c.crop_height;
    p.crop_width = c.crop_width;
    p.interpolation = detail::str(c.interpolation);
    p.mean.assign(c.mean, c.mean + c.num_mean);
    p.std.assign(c.std, c.std + c.num_std);
    return p;
  }
  // Every label, in class order (may be fewer than num_classes(), or none).
  std::vector<std::string> labels() const {
    std::vector<std::string> out;
    for (int32_t i = 0; const char* l = vitrt_model_label(model_, i); ++i) out.emplace_back(l);
    return out;
  }
  // The type of every op in file order, and how many ops of each type (sorted by name).
  std::vector<std::string> op_types() const {
    std::vector<std::string> out;
    for (int32_t i = 0; const char* t = vitrt_model_op_type(model_, i); ++i) out.emplace_back(t);
    return out;
  }
  std::map<std::string, int> op_counts() const {
    std::map<std::string, int> counts;
    for (const std::string& t : op_types()) counts[t]++;
    return counts;
  }
  // Every metadata key/value pair, sorted by key.
  std::vector<std::pair<std::string, std::string>> metadata_entries() const {
    const int32_t n = info().num_metadata;
    std::vector<std::pair<std::string, std::string>> out;
    for (int32_t i = 0; i < n; ++i) {
      const char *k = nullptr, *v = nullptr;
      detail::check(vitrt_model_metadata_at(model_, i, &k, &v));
      out.emplace_back(k, v);
    }
    return out;
  }
  const vitrt_model_t* get() const noexcept { return model_; }

 private:
  explicit Model(vitrt_model_t* m) : model_(m) {}
  vitrt_model_t* model_ = nullptr;
};

struct SessionOptions {
  vitrt_backend_t backend = VITRT_BACKEND_AUTO;
  int32_t num_threads = 1;
  int32_t max_batch = 1;
  uint64_t max_memory_bytes = 0;        // 0: this machine's physical memory
  int32_t opt_level = 1;                // 0: the graph as written; 1: the planner passes
  std::string disabled_passes;          // comma-separated planner passes to skip, or "all"
  bool profile = false;                 // accumulate each step's time (Session::steps()[i].seconds)
  bool preserve_intermediates = false;  // every tensor readable after a run (TensorInfo::data)
  // bf16: Linear and attention products in bf16 with fp32 sums where the CPU has AVX512-BF16, else fp32
  // (PlanInfo::precision).
  vitrt_precision_t precision = VITRT_PRECISION_FP32;
};

struct MemoryReport {
  uint64_t activation_bytes = 0, workspace_bytes = 0, weight_bytes = 0;
};

// The plan report (vitrt_plan_info_t, vitrt_pass_info_t, vitrt_step_info_t, vitrt_tensor_info_t).
struct PlanInfo {
  std::string backend;
  int32_t max_batch = 0, num_steps = 0;
  uint64_t weight_bytes = 0, activation_bytes = 0, activation_lower_bound = 0, workspace_bytes = 0,
           persistent_bytes = 0;
  int64_t profiled_runs = 0;
  std::string precision;  // what runs: "fp32", "bf16: <which ops>", or "fp32: <why not bf16>"
};
// A step range run in tiles (vitrt_tile_info_t).
struct TileInfo {
  std::string kind;  // "batch" or "rows"
  int32_t first_step = 0, last_step = -1;
  int64_t block = 0;  // images or rows per block
  int32_t threads = 1;
};
struct PassInfo {
  std::string name;
  bool ran = false, modified = false;
  int32_t ops_after = 0;
};
struct TensorInfo {
  std::string name;
  int32_t index = -1;
  std::vector<int64_t> dims;
  std::string arena;
  uint64_t offset = 0, bytes = 0;
  int32_t first_step = -1, last_step = -1;
  int32_t inplace_of = -1;
  std::string inplace_of_name;
  const float* data = nullptr;  // with preserve_intermediates, after a run; owned by the session
};
struct StepInfo {
  std::string op, name;
  double seconds = 0;  // with profile: over PlanInfo::profiled_runs runs
  std::vector<TensorInfo> outputs;
};

// A model planned for one backend and a maximum batch. Move-only; keeps its model alive by itself.
class Session {
 public:
  Session(const Model& model, const SessionOptions& options = SessionOptions()) {
    vitrt_session_options_t o = vitrt_session_default_options();
    o.backend = options.backend;
    o.num_threads = options.num_threads;
    o.max_batch = options.max_batch;
    o.max_memory_bytes = options.max_memory_bytes;
    o.opt_level = options.opt_level;
    o.profile = options.profile;
    o.disabled_passes = options.disabled_passes.empty() ? nullptr : options.disabled_passes.c_str();
    o.preserve_intermediates = options.preserve_intermediates;
    o.precision = options.precision;
    detail::check(vitrt_session_create(model.get(), &o, &session_));
    num_classes_ = vitrt_model_num_classes(model.get());
  }
  Session(Session&& o) noexcept
      : session_(std::exchange(o.session_, nullptr)), num_classes_(o.num_classes_) {}
  Session& operator=(Session&& o) noexcept {
    if (this != &o) {
      vitrt_session_free(session_);
      session_ = std::exchange(o.session_, nullptr);
      num_classes_ = o.num_classes_;
    }
    return *this;
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { vitrt_session_free(session_); }

  // input: float32 [batch, C, H, W]; logits: room for `capacity` floats (>= batch * num_classes()).
  void run(const float* input, int32_t batch, float* logits, size_t capacity) {
    detail::check(vitrt_session_run(session_, input, batch, logits, capacity));
  }
  void run(Span<const float> input, int32_t batch, Span<float> logits) {
    run(input.data(), batch, logits.data(), logits.size());
  }
  // The same, returning the logits [batch, num_classes()] row-major.
  std::vector<float> run(const float* input, int32_t batch) {
    std::vector<float> logits(static_cast<size_t>(batch < 0 ? 0 : batch) * static_cast<size_t>(num_classes_));
    run(input, batch, logits.data(), logits.size());
    return logits;
  }
  int32_t num_classes() const noexcept { return num_classes_; }
  MemoryReport memory() const {
    MemoryReport r;
    detail::check(vitrt_session_memory(session_, &r.activation_bytes, &r.workspace_bytes, &r.weight_bytes));
    return r;
  }
  PlanInfo plan() const {
    auto c = detail::info_struct<vitrt_plan_info_t>();
    detail::check(vitrt_session_get_plan(session_, &c));
    PlanInfo p;
    p.backend = detail::str(c.backend);
    p.max_batch = c.max_batch;
    p.num_steps = c.num_steps;
    p.weight_bytes = c.weight_bytes;
    p.activation_bytes = c.activation_bytes;
    p.activation_lower_bound = c.activation_lower_bound;
    p.workspace_bytes = c.workspace_bytes;
    p.persistent_bytes = c.persistent_bytes;
    p.profiled_runs = c.profiled_runs;
    p.precision = detail::str(c.precision);
    return p;
  }
  // The name of the backend that runs the session ("cpu", "ref", "cuda").
  std::string backend_name() const { return plan().backend; }
  // What the session computes in (PlanInfo::precision).
  std::string precision() const { return plan().precision; }
  std::vector<PassInfo> passes() const {
    auto c = detail::info_struct<vitrt_plan_info_t>();
    detail::check(vitrt_session_get_plan(session_, &c));
    std::vector<PassInfo> out;
    for (int32_t i = 0; i < c.num_passes; ++i) {
      auto p = detail::info_struct<vitrt_pass_info_t>();
      detail::check(vitrt_session_get_pass(session_, i, &p));
      out.push_back({detail::str(p.name), p.ran != 0, p.modified != 0, p.ops_after});
    }
    return out;
  }
  // The batch tile and the row tiles (API version 6).
  std::vector<TileInfo> tiles() const {
    auto c = detail::info_struct<vitrt_plan_info_t>();
    detail::check(vitrt_session_get_plan(session_, &c));
    std::vector<TileInfo> out;
    for (int32_t i = 0; i < c.num_tiles; ++i) {
      auto t = detail::info_struct<vitrt_tile_info_t>();
      detail::check(vitrt_session_get_tile(session_, i, &t));
      out.push_back({detail::str(t.kind), t.first_step, t.last_step, t.block, t.threads});
    }
    return out;
  }
  // Step `index` of the plan with its output tensors.
  StepInfo step(int32_t index) const {
    auto c = detail::info_struct<vitrt_step_info_t>();
    detail::check(vitrt_session_get_step(session_, index, &c));
    StepInfo s;
    s.op = detail::str(c.op);
    s.name = detail::str(c.name);
    s.seconds = c.seconds;
    for (int32_t k = 0; k < c.num_outputs; ++k) {
      auto t = detail::info_struct<vitrt_tensor_info_t>();
      detail::check(vitrt_session_get_step_output(session_, index, k, &t));
      TensorInfo o;
      o.name = detail::str(t.name);
      o.index = t.index;
      o.dims.assign(t.dims, t.dims + t.rank);
      o.arena = detail::str(t.arena);
      o.offset = t.offset;
      o.bytes = t.bytes;
      o.first_step = t.first_step;
      o.last_step = t.last_step;
      o.inplace_of = t.inplace_of;
      o.inplace_of_name = detail::str(t.inplace_of_name);
      o.data = t.data;
      s.outputs.push_back(std::move(o));
    }
    return s;
  }
  std::vector<StepInfo> steps() const {
    std::vector<StepInfo> out;
    const int32_t n = plan().num_steps;
    for (int32_t i = 0; i < n; ++i) out.push_back(step(i));
    return out;
  }
  void reset_profile() { detail::check(vitrt_session_reset_profile(session_)); }

 private:
  vitrt_session_t* session_ = nullptr;
  int32_t num_classes_ = 0;
};

// Decodes a PNG or JPEG and preprocesses it as the model says (resize, centre crop, normalisation): [C,H,W].
inline void preprocess_image(const Model& model, const std::string& path, Span<float> dst) {
  detail::check(vitrt_image_preprocess(model.get(), path.c_str(), dst.data(), dst.size()));
}
// The same for an encoded PNG or JPEG in memory; `name` is what messages call it.
inline void preprocess_image_memory(const Model& model, const void* data, size_t size,
                                    const std::string& name, Span<float> dst) {
  detail::check(vitrt_image_preprocess_memory(model.get(), data, size, name.c_str(), dst.data(), dst.size()));
}
inline std::vector<float> preprocess_image(const Model& model, const std::string& path) {
  std::vector<float> dst(model.input_shape().elements());
  preprocess_image(model, path, Span<float>(dst));
  return dst;
}

// A float32 array read from a .npy file (vitrt_array_t). Move-only.
class Array {
 public:
  static Array read_npy(const std::string& path) {
    vitrt_array_t* a = nullptr;
    detail::check(vitrt_npy_read(path.c_str(), &a));
    return Array(a);
  }
  Array(Array&& o) noexcept : array_(std::exchange(o.array_, nullptr)) {}
  Array& operator=(Array&& o) noexcept {
    if (this != &o) {
      vitrt_array_free(array_);
      array_ = std::exchange(o.array_, nullptr);
    }
    return *this;
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  ~Array() { vitrt_array_free(array_); }

  std::vector<int64_t> dims() const {
    const int64_t* d = vitrt_array_dims(array_);
    return std::vector<int64_t>(d, d + vitrt_array_rank(array_));
  }
  Span<const float> values() const {
    return Span<const float>(vitrt_array_data(array_), vitrt_array_size(array_));
  }

 private:
  explicit Array(vitrt_array_t* a) : array_(a) {}
  vitrt_array_t* array_ = nullptr;
};

// Writes float32 values of shape `dims` as a .npy file.
inline void write_npy(const std::string& path, Span<const float> values, const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d < 0 ? 0 : d);
  if (n > values.size())
    throw Error(VITRT_ERR_INVALID_ARGUMENT, "write_npy: '" + path + "': the shape holds " +
                                                std::to_string(n) + " values, the span " +
                                                std::to_string(values.size()));
  detail::check(vitrt_npy_write(path.c_str(), values.data(), dims.data(), static_cast<int32_t>(dims.size())));
}

inline std::string version() {
  return vitrt_version();
}

}  // namespace api
}  // namespace vitrt

#endif  // VITRT_HPP_
