// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "common/status.h"

namespace vitrt {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kBadModel: return "bad model";
    case StatusCode::kBadInput: return "bad input";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kOutOfMemory: return "out of memory";
    case StatusCode::kRuntime: return "runtime error";
    case StatusCode::kIo: return "i/o error";
  }
  return "unknown";
}

}  // namespace vitrt
