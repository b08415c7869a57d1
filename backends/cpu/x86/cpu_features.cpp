// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// CPUID (through GCC's __builtin_cpu_supports, which also checks that the OS saves the wide registers) and
// the caps: X86Options::max_isa and force_ref (VITRT_MAX_ISA, VITRT_FORCE_REF: x86_options.cpp).
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

bool x86_has_avx512_bf16() {
  __builtin_cpu_init();
  return x86_detect_isa() == X86Isa::kAvx512 && __builtin_cpu_supports("avx512bf16");
}

X86Isa x86_effective_isa(const X86Options& options) {
  const X86Options o = x86_options_from_env(options);
  if (o.force_ref) return X86Isa::kNone;
  const X86Isa isa = x86_detect_isa();
  return static_cast<int>(o.max_isa) < static_cast<int>(isa) ? o.max_isa : isa;
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
