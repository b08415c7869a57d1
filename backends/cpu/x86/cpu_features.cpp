// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// CPUID (through GCC's __builtin_cpu_supports, which also checks that the OS saves the wide registers) and
// the caps: X86Options::max_isa and force_ref (VITRT_MAX_ISA, VITRT_FORCE_REF: x86_options.cpp).
#include <cpuid.h>

#include "backends/cpu/x86/x86_backend.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

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

bool x86_avx512_is_split() {
  static const bool split = [] {
    if (x86_detect_isa() != X86Isa::kAvx512) return false;
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
    const bool amd = ebx == 0x68747541u && edx == 0x69746e65u && ecx == 0x444d4163u;  // "AuthenticAMD"
    if (!amd || !__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    const unsigned base = (eax >> 8) & 0xfu, family = base == 0xfu ? base + ((eax >> 20) & 0xffu) : base;
    return family == 0x19u;  // Zen 3 (no AVX-512) and Zen 4; Zen 5 is 1Ah
  }();
  return split;
}

bool x86_has_amx_bf16() {
  static const bool has = [] {
    if (!x86_has_avx512_bf16()) return false;
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    const bool amx_bf16 = (edx >> 22) & 1u, amx_tile = (edx >> 24) & 1u;
    if (!amx_bf16 || !amx_tile) return false;
    // Palette 1 (CPUID leaf 0x1D, subleaf 1) must offer what the kernel configures: 8 tiles of 16 rows × 64
    // bytes (every AMX part so far does).
    if (!__get_cpuid_count(0x1d, 1, &eax, &ebx, &ecx, &edx) || (ebx >> 16) < 8 || (ebx & 0xffffu) < 64 ||
        (ecx & 0xffffu) < 16)
      return false;
    // XCR0 bits 17 (tile configuration) and 18 (tile data): the OS saves and restores the tile state. XGETBV
    // is there: the AVX-512 check above needs OSXSAVE.
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if (((lo >> 17) & 3u) != 3u) return false;
#if defined(__linux__)
    // Linux hands out the tile data state per process on request (ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
    // a tile instruction without it is a SIGILL. Refused (an old kernel, a seccomp filter): no AMX. Granted, it
    // holds for every thread of the process, and from then on the kernel refuses a sigaltstack() too small for
    // the larger signal frame (docs/architecture.md §7.1 says so for embedders).
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
#endif
    return true;
  }();
  return has;
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
