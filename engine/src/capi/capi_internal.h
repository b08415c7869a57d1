// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What the files of the C API (engine/src/capi/*.cpp) share: the handle structs behind vitrt.h's opaque
// types, the thread-local error message, and the guard that keeps C++ exceptions from crossing the C
// boundary.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "loader/model_loader.h"
#include "runtime/session.h"
#include "vitrt.h"

struct vitrt_model {
  std::shared_ptr<const vitrt::Model> model;
};

struct vitrt_session {
  std::unique_ptr<vitrt::Session> session;
};

struct vitrt_array {
  std::vector<float> values;
  std::vector<int64_t> dims;
};

namespace vitrt::capi {

// Records `st`'s message as the thread's last error (cleared on success) and returns its code. Never throws.
vitrt_status_t report(const Status& st) noexcept;
// Records `message` as the thread's last error and returns `code`. Never throws: the C entry points call it
// outside `guarded` for their null-argument checks (building a longer message belongs inside `guarded`).
vitrt_status_t fail(vitrt_status_t code, const char* message) noexcept;
vitrt_status_t fail(vitrt_status_t code, const std::string& message) noexcept;

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

// Copies a filled info struct to the caller's (already checked by check_info), at most the caller's
// struct_size bytes: a caller built against an older header has a shorter struct and keeps its struct_size.
template <typename Info>
vitrt_status_t copy_info(const Info& filled, Info* caller) {
  const size_t n = caller->struct_size;
  std::memcpy(static_cast<void*>(caller), &filled, n);
  caller->struct_size = n;
  return report(Status::Ok());
}

// Checks a caller's info struct pointer and struct_size before any work (inside `guarded`: it builds
// messages).
template <typename Info>
vitrt_status_t check_info(const Info* caller, const char* function) {
  if (!caller) return fail(VITRT_ERR_INVALID_ARGUMENT, std::string(function) + ": null info struct");
  if (caller->struct_size < sizeof(size_t) || caller->struct_size > sizeof(Info))
    return fail(VITRT_ERR_INVALID_ARGUMENT,
                std::string(function) + ": struct_size is " + std::to_string(caller->struct_size) +
                    ", expected " + std::to_string(sizeof(Info)) + " (set it to sizeof the struct)");
  return VITRT_OK;
}

// Copies a shape into a fixed dims array (ranks above VITRT_MAX_RANK cannot occur: kMaxRank is the same).
void copy_shape(const Shape& s, int32_t* rank, int64_t* dims);

}  // namespace vitrt::capi
