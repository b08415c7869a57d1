// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
//
// vitrt.hpp — header-only C++17 RAII wrapper over the C API (vitrt.h). Nothing here is compiled into the
// library, so the ABI stays the C one. Failures throw vitrt::api::Error, which carries the C status code and
// the library's message (naming the file, tensor or op involved).
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
#include <stdexcept>
#include <string>
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
}  // namespace detail

struct InputShape {
  int32_t channels = 0, height = 0, width = 0;
  size_t elements() const { return static_cast<size_t>(channels) * height * width; }
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
  const vitrt_model_t* get() const noexcept { return model_; }

 private:
  explicit Model(vitrt_model_t* m) : model_(m) {}
  vitrt_model_t* model_ = nullptr;
};

struct SessionOptions {
  vitrt_backend_t backend = VITRT_BACKEND_AUTO;
  int32_t num_threads = 1;
  int32_t max_batch = 1;
  uint64_t max_memory_bytes = 0;  // 0: this machine's physical memory
};

struct MemoryReport {
  uint64_t activation_bytes = 0, workspace_bytes = 0, weight_bytes = 0;
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

 private:
  vitrt_session_t* session_ = nullptr;
  int32_t num_classes_ = 0;
};

// Decodes a PNG or JPEG and preprocesses it as the model says (resize, centre crop, normalisation): [C,H,W].
inline std::vector<float> preprocess_image(const Model& model, const std::string& path) {
  std::vector<float> dst(model.input_shape().elements());
  detail::check(vitrt_image_preprocess(model.get(), path.c_str(), dst.data(), dst.size()));
  return dst;
}

inline std::string version() {
  return vitrt_version();
}

}  // namespace api
}  // namespace vitrt

#endif  // VITRT_HPP_
