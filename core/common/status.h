// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Status: the error type of every fallible call inside vitrt. The library never throws across its C boundary,
// never asserts and never aborts: failures travel as a Status that names the file, tensor or op involved.
#include <string>
#include <utility>

namespace vitrt {

// Keep in sync with vitrt_status_t in engine/include/vitrt.h (same numeric values).
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // a caller passed something unusable (null pointer, bad option)
  kBadModel = 2,         // the model file is corrupt, truncated, or semantically invalid
  kBadInput = 3,         // an input tensor, image or checkpoint is unusable
  kUnsupported = 4,      // a valid request this build cannot serve (unknown op version, missing backend)
  kOutOfMemory = 5,
  kRuntime = 6,          // a failure while running a plan
  kIo = 7,               // a file could not be read or written
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prepends context ("while loading 'x.vitrt': ") to the message, keeping the code.
  Status& with_context(const std::string& context) {
    if (!ok()) message_ = context + ": " + message_;
    return *this;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

const char* status_code_name(StatusCode code);

inline Status invalid_argument(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
inline Status bad_model(std::string m) { return Status(StatusCode::kBadModel, std::move(m)); }
inline Status bad_input(std::string m) { return Status(StatusCode::kBadInput, std::move(m)); }
inline Status unsupported(std::string m) { return Status(StatusCode::kUnsupported, std::move(m)); }
inline Status out_of_memory(std::string m) { return Status(StatusCode::kOutOfMemory, std::move(m)); }
inline Status runtime_error(std::string m) { return Status(StatusCode::kRuntime, std::move(m)); }
inline Status io_error(std::string m) { return Status(StatusCode::kIo, std::move(m)); }

}  // namespace vitrt

#define VITRT_RETURN_IF_ERROR(expr)          \
  do {                                       \
    ::vitrt::Status vitrt_status_ = (expr);  \
    if (!vitrt_status_.ok()) return vitrt_status_; \
  } while (0)
