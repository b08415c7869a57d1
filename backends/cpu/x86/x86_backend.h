// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The fast x86 CPU backend ("cpu"): AVX-512 / AVX2 kernels chosen by CPUID, oneDNN for Linear and Conv2d,
// the reference kernels for every op it does not implement.
#include <memory>

#include "backends/backend.h"

namespace vitrt {

enum class X86Isa : int { kNone = 0, kAvx2 = 1, kAvx512 = 2 };  // kAvx2 = AVX2+FMA, kAvx512 = F/BW/VL/DQ

struct X86Options {
  X86Isa max_isa = X86Isa::kAvx512;  // cap (dnnl_set_max_cpu_isa-style); the CPU may offer less
  bool read_env = true;              // honour VITRT_FORCE_REF=1 and VITRT_MAX_ISA=avx2|avx512
};

// The ISA the CPU (and OS) supports, ignoring caps.
X86Isa x86_detect_isa();
// min(CPU, options.max_isa, VITRT_MAX_ISA); kNone when VITRT_FORCE_REF=1 (with read_env).
X86Isa x86_effective_isa(const X86Options& options);
const char* x86_isa_name(X86Isa isa);

// nullptr when the effective ISA is kNone (no AVX2+FMA, VITRT_FORCE_REF=1, or capped below avx2): the caller
// then uses the reference backend.
std::unique_ptr<Backend> create_x86_backend(const X86Options& options = X86Options{});

}  // namespace vitrt
