// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// CPUID (through GCC's __builtin_cpu_supports, which also checks that the OS saves the wide registers) and
// the caps: X86Options::max_isa, VITRT_MAX_ISA=avx2|avx512, VITRT_FORCE_REF=1.
#include <cstdlib>
#include <cstring>

#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {

X86Isa x86_detect_isa() {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!avx2) return X86Isa::kNone;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512cd");
  return avx512 ? X86Isa::kAvx512 : X86Isa::kAvx2;
}

X86Isa x86_effective_isa(const X86Options& options) {
  X86Isa isa = x86_detect_isa();
  if (static_cast<int>(options.max_isa) < static_cast<int>(isa)) isa = options.max_isa;
  if (options.read_env) {
    const char* force = std::getenv("VITRT_FORCE_REF");
    if (force && *force && std::strcmp(force, "0") != 0) return X86Isa::kNone;
    const char* cap = std::getenv("VITRT_MAX_ISA");
    if (cap && *cap) {
      X86Isa c = isa;
      if (std::strcmp(cap, "avx2") == 0)
        c = X86Isa::kAvx2;
      else if (std::strcmp(cap, "avx512") == 0)
        c = X86Isa::kAvx512;
      else if (std::strcmp(cap, "none") == 0 || std::strcmp(cap, "ref") == 0)
        c = X86Isa::kNone;
      if (static_cast<int>(c) < static_cast<int>(isa)) isa = c;
    }
  }
  return isa;
}

const char* x86_isa_name(X86Isa isa) {
  switch (isa) {
    case X86Isa::kAvx512:
      return "avx512";
    case X86Isa::kAvx2:
      return "avx2";
    default:
      return "none";
  }
}

}  // namespace vitrt
