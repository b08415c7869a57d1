// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
#include <memory>
#include <string>

#include "backends/backend.h"

namespace vitrt {

// name: "auto" | "cpu" | "ref" | "cuda". "auto" picks the best backend this machine has. precision: what the
// session asks for; only the x86 backend has bf16 kernels (the others run fp32).
Status create_backend(const std::string& name, std::unique_ptr<Backend>* out,
                      Precision precision = Precision::kFp32);

}  // namespace vitrt
