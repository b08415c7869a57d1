// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The C API's session handle: options, creation, running, memory.
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "capi/capi_internal.h"

using namespace vitrt::capi;

namespace {

// A C enum field as the integer the caller stored. Loading a value that is none of the enumerators as the
// enum type is undefined in C++ (the sanitizer's "not a valid value for type"), and a C caller may store any
// int.
template <typename E>
long long stored_value(const E& field) {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &field, sizeof v);
  return static_cast<long long>(v);
}

const char* backend_name(long long b) {
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

vitrt_session_options_t vitrt_session_default_options(void) {
  vitrt_session_options_t o = {};
  o.struct_size = sizeof(vitrt_session_options_t);
  o.backend = VITRT_BACKEND_AUTO;
  o.num_threads = 1;
  o.max_batch = 1;
  o.max_memory_bytes = 0;
  o.opt_level = 1;
  o.profile = 0;
  o.disabled_passes = nullptr;
  o.preserve_intermediates = 0;
  o.reserved_v4 = 0;
  o.precision = VITRT_PRECISION_FP32;
  return o;
}

vitrt_status_t vitrt_backend_from_name(const char* name, vitrt_backend_t* out) {
  if (!name || !out) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_backend_from_name: null argument");
  for (vitrt_backend_t b : {VITRT_BACKEND_AUTO, VITRT_BACKEND_CPU, VITRT_BACKEND_REF, VITRT_BACKEND_CUDA})
    if (std::strcmp(name, backend_name(b)) == 0) {
      *out = b;
      return report(vitrt::Status::Ok());
    }
  return guarded([&] {
    return fail(VITRT_ERR_INVALID_ARGUMENT,
                std::string("unknown backend '") + name + "' (expected auto, cpu, ref or cuda)");
  });
}

vitrt_status_t vitrt_precision_from_name(const char* name, vitrt_precision_t* out) {
  if (!name || !out) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_precision_from_name: null argument");
  if (std::strcmp(name, "fp32") == 0 || std::strcmp(name, "bf16") == 0) {
    *out = name[0] == 'f' ? VITRT_PRECISION_FP32 : VITRT_PRECISION_BF16;
    return report(vitrt::Status::Ok());
  }
  return guarded([&] {
    return fail(VITRT_ERR_INVALID_ARGUMENT,
                std::string("unknown precision '") + name + "' (expected fp32 or bf16)");
  });
}

namespace {
// vitrt_session_options_t as API version 3 laid it out: a version-4 field must start at or after its size, or
// a version-3 caller's struct_size would cover it (vitrt.h, reserved_v4).
struct SessionOptionsV3 {
  size_t struct_size;
  vitrt_backend_t backend;
  int32_t num_threads, max_batch;
  uint64_t max_memory_bytes;
  int32_t opt_level, profile;
  const char* disabled_passes;
  int32_t preserve_intermediates;
};
static_assert(offsetof(vitrt_session_options_t, precision) >= sizeof(SessionOptionsV3),
              "API version 4's precision must lie past every version-3 struct_size");
}  // namespace

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
    const long long precision = stored_value(o.precision);
    if (precision != VITRT_PRECISION_FP32 && precision != VITRT_PRECISION_BF16)
      return fail(VITRT_ERR_INVALID_ARGUMENT,
                  "vitrt_session_create: options.precision must be VITRT_PRECISION_FP32 (0) or "
                  "VITRT_PRECISION_BF16 (1), got " +
                      std::to_string(precision));
    vitrt::SessionOptions so;
    so.backend = backend_name(stored_value(o.backend));
    so.num_threads = o.num_threads;
    so.max_batch = o.max_batch;
    so.max_memory_bytes = o.max_memory_bytes;
    so.opt_level = o.opt_level;
    so.profile = o.profile != 0;
    so.disabled_passes = o.disabled_passes ? o.disabled_passes : "";
    so.preserve_intermediates = o.preserve_intermediates != 0;
    so.precision = precision == VITRT_PRECISION_BF16 ? vitrt::Precision::kBf16 : vitrt::Precision::kFp32;
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

}  // extern "C"
