// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The C boundary: argument checks, exceptions -> status codes, the thread-local error message.
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "format_version.h"
#include "image/image.h"
#include "loader/model_loader.h"
#include "runtime/session.h"
#include "vitrt.h"

struct vitrt_model {
  std::shared_ptr<const vitrt::Model> model;
};

struct vitrt_session {
  std::unique_ptr<vitrt::Session> session;
};

namespace {

thread_local std::string g_last_error;

vitrt_status_t report(const vitrt::Status& st) {
  if (st.ok()) {
    g_last_error.clear();
    return VITRT_OK;
  }
  try {
    g_last_error = st.message();
  } catch (...) {
  }
  return static_cast<vitrt_status_t>(static_cast<int>(st.code()));
}

vitrt_status_t fail(vitrt_status_t code, const char* message) {
  try {
    g_last_error = message;
  } catch (...) {
  }
  return code;
}

// Runs `body` and turns any escaping exception into a status.
template <typename F>
vitrt_status_t guarded(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(VITRT_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(VITRT_ERR_RUNTIME, e.what());
  } catch (...) {
    return fail(VITRT_ERR_RUNTIME, "unknown internal error");
  }
}

std::string backend_name(vitrt_backend_t b) {
  switch (b) {
    case VITRT_BACKEND_AUTO:
      return "auto";
    case VITRT_BACKEND_CPU:
      return "cpu";
    case VITRT_BACKEND_REF:
      return "ref";
    case VITRT_BACKEND_CUDA:
      return "cuda";
  }
  return "invalid";
}

}  // namespace

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

vitrt_status_t vitrt_model_load(const char* path, vitrt_model_t** out) {
  if (out) *out = nullptr;
  if (!path || !out) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_load: null argument");
  return guarded([&] {
    std::shared_ptr<const vitrt::Model> m;
    vitrt::Status st = vitrt::load_model(path, &m);
    if (!st.ok()) return report(st);
    *out = new vitrt_model{std::move(m)};
    return report(st);
  });
}

vitrt_status_t vitrt_model_load_from_memory(const void* data, size_t size, vitrt_model_t** out) {
  if (out) *out = nullptr;
  if (!data || !out) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_load_from_memory: null argument");
  return guarded([&] {
    std::shared_ptr<const vitrt::Model> m;
    vitrt::Status st = vitrt::load_model_from_memory(data, size, &m);
    if (!st.ok()) return report(st);
    *out = new vitrt_model{std::move(m)};
    return report(st);
  });
}

void vitrt_model_free(vitrt_model_t* model) {
  delete model;
}

vitrt_status_t vitrt_model_input_shape(const vitrt_model_t* model, int32_t* c, int32_t* h, int32_t* w) {
  if (!model) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_input_shape: null model");
  const vitrt::Graph& g = model->model->graph;
  const vitrt::Shape& s = g.tensors[g.inputs[0]].shape;
  if (c) *c = static_cast<int32_t>(s[1]);
  if (h) *h = static_cast<int32_t>(s[2]);
  if (w) *w = static_cast<int32_t>(s[3]);
  return VITRT_OK;
}

int32_t vitrt_model_num_classes(const vitrt_model_t* model) {
  if (!model) return 0;
  const vitrt::Graph& g = model->model->graph;
  const vitrt::Shape& s = g.tensors[g.outputs[0]].shape;
  return s.rank >= 2 ? static_cast<int32_t>(s.dims[s.rank - 1]) : 0;
}

const char* vitrt_model_label(const vitrt_model_t* model, int32_t index) {
  if (!model || index < 0) return nullptr;
  const auto& labels = model->model->graph.metadata.labels;
  return static_cast<size_t>(index) < labels.size() ? labels[index].c_str() : nullptr;
}

const char* vitrt_model_arch(const vitrt_model_t* model) {
  return model ? model->model->graph.metadata.arch.c_str() : nullptr;
}

const char* vitrt_model_metadata(const vitrt_model_t* model, const char* key) {
  if (!model || !key) return nullptr;
  const auto& extra = model->model->graph.metadata.extra;
  auto it = extra.find(key);
  return it == extra.end() ? nullptr : it->second.c_str();
}

vitrt_session_options_t vitrt_session_default_options(void) {
  vitrt_session_options_t o;
  o.struct_size = sizeof(vitrt_session_options_t);
  o.backend = VITRT_BACKEND_AUTO;
  o.num_threads = 1;
  o.max_batch = 1;
  o.max_memory_bytes = 0;
  return o;
}

vitrt_status_t vitrt_session_create(const vitrt_model_t* model, const vitrt_session_options_t* options,
                                    vitrt_session_t** out) {
  if (out) *out = nullptr;
  if (!model || !out) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_create: null argument");
  vitrt_session_options_t o = vitrt_session_default_options();
  if (options) {
    if (options->struct_size < sizeof(size_t) || options->struct_size > sizeof(vitrt_session_options_t))
      return fail(
          VITRT_ERR_INVALID_ARGUMENT,
          "vitrt_session_create: options.struct_size is wrong; start from vitrt_session_default_options()");
    // Only the caller's struct_size bytes are the caller's: a struct from an older header is shorter, and the
    // fields it lacks keep their defaults.
    std::memcpy(&o, options, options->struct_size);
    o.struct_size = sizeof o;
  }
  return guarded([&] {
    vitrt::SessionOptions so;
    so.backend = backend_name(o.backend);
    so.num_threads = o.num_threads;
    so.max_batch = o.max_batch;
    so.max_memory_bytes = o.max_memory_bytes;
    std::unique_ptr<vitrt::Session> s;
    vitrt::Status st = vitrt::Session::create(model->model, so, &s);
    if (!st.ok()) return report(st);
    *out = new vitrt_session{std::move(s)};
    return report(st);
  });
}

void vitrt_session_free(vitrt_session_t* session) {
  delete session;
}

vitrt_status_t vitrt_session_run(vitrt_session_t* session, const float* input, int32_t batch, float* logits,
                                 size_t logits_capacity) {
  if (!session || !input || !logits)
    return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_run: null argument");
  return guarded([&] { return report(session->session->run(input, batch, logits, logits_capacity)); });
}

vitrt_status_t vitrt_session_memory(const vitrt_session_t* session, uint64_t* activation_bytes,
                                    uint64_t* workspace_bytes, uint64_t* weight_bytes) {
  if (!session) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_memory: null session");
  const vitrt::MemoryReport& m = session->session->memory();
  if (activation_bytes) *activation_bytes = m.activation_bytes;
  if (workspace_bytes) *workspace_bytes = m.workspace_bytes;
  if (weight_bytes) *weight_bytes = m.weight_bytes;
  return VITRT_OK;
}

vitrt_status_t vitrt_image_preprocess(const vitrt_model_t* model, const char* image_path, float* dst,
                                      size_t dst_capacity) {
  if (!model || !image_path || !dst)
    return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_image_preprocess: null argument");
  return guarded([&] {
    const vitrt::Graph& g = model->model->graph;
    const vitrt::Shape& s = g.tensors[g.inputs[0]].shape;
    const size_t need = static_cast<size_t>(s[1] * s[2] * s[3]);
    if (dst_capacity < need)
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_image_preprocess: dst holds fewer than C*H*W floats");
    return report(vitrt::load_and_preprocess(image_path, g.metadata.preprocess, dst));
  });
}

}  // extern "C"
