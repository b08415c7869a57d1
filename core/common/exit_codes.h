// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Process exit codes of the command-line tools (documented in the README).
#include "common/status.h"

namespace vitrt {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 1;     // bad command line
constexpr int kExitBadModel = 2;  // the model file (or checkpoint being converted) is unusable
constexpr int kExitBadInput = 3;  // an input image / tensor / labels file is unusable
constexpr int kExitRuntime = 4;   // a failure while running (out of memory, backend error)

// While handling a model file every load failure is a bad model; otherwise map by code.
inline int exit_code_for(const Status& st, bool loading_model) {
  if (st.ok()) return kExitOk;
  if (loading_model) return kExitBadModel;
  switch (st.code()) {
    case StatusCode::kInvalidArgument: return kExitUsage;
    case StatusCode::kBadModel: return kExitBadModel;
    case StatusCode::kBadInput:
    case StatusCode::kIo: return kExitBadInput;
    default: return kExitRuntime;
  }
}

}  // namespace vitrt
