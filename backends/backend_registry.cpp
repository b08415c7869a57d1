// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Which backends this build has, and creating one by name.
#include "backends/backend_registry.h"

namespace vitrt {

Status create_backend(const std::string& name, std::unique_ptr<Backend>* out) {
  if (name == "auto" || name == "cpu" || name == "ref") {
    *out = create_reference_backend();
    return Status::Ok();
  }
  if (name == "cuda")
    return unsupported("backend 'cuda' is not available in this build (no CUDA backend compiled in)");
  return invalid_argument("unknown backend '" + name + "' (expected auto, cpu, ref or cuda)");
}

}  // namespace vitrt
