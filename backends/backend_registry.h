// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
#include <memory>
#include <string>

#include "backends/backend.h"

namespace vitrt {

// name: "auto" | "cpu" | "ref" | "cuda". "auto" picks the best backend this machine has.
Status create_backend(const std::string& name, std::unique_ptr<Backend>* out);

}  // namespace vitrt
