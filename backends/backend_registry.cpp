// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Which backends this build has, and creating one by name.
#include "backends/backend_registry.h"

#include "backends/cpu/x86/x86_backend.h"
#if defined(VITRT_HAVE_CUDA)
#include "backends/cuda/cuda_backend.h"
#endif

namespace vitrt {

Status create_backend(const std::string& name, std::unique_ptr<Backend>* out, Precision precision) {
  if (name == "auto" || name == "cpu") {
    // nullptr: no AVX2/AVX-512 on this CPU, VITRT_FORCE_REF=1, or VITRT_MAX_ISA=none.
    X86Options x86;
    x86.bf16 = precision == Precision::kBf16;
    std::unique_ptr<Backend> b = create_x86_backend(x86);
    *out = b ? std::move(b) : create_reference_backend();
    return Status::Ok();
  }
  if (name == "ref") {
    *out = create_reference_backend();
    return Status::Ok();
  }
  if (name == "cuda") {
#if defined(VITRT_HAVE_CUDA)
    Status why;
    std::unique_ptr<Backend> b = create_cuda_backend(/*device=*/0, &why);
    if (!b) return Status(why.code(), "backend 'cuda' is not available: " + why.message());
    *out = std::move(b);
    return Status::Ok();
#else
    return unsupported("backend 'cuda' is not available in this build (configure with -DVITRT_CUDA=ON)");
#endif
  }
  return invalid_argument("unknown backend '" + name + "' (expected auto, cpu, ref or cuda)");
}

}  // namespace vitrt
