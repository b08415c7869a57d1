// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The fast x86 CPU backend ("cpu"): AVX-512 / AVX2 kernels chosen by CPUID, its own packed GEMM for Linear
// and Conv2d, the reference kernels for every op it does not implement. oneDNN's Linear and Conv2d can stand
// in for the packed GEMM (use_onednn, for comparisons) when the build has backends/cpu/onednn.
#include <cstdint>
#include <memory>

#include "backends/backend.h"

namespace vitrt {

enum class X86Isa : int { kNone = 0, kAvx2 = 1, kAvx512 = 2 };  // kAvx2 = AVX2+FMA, kAvx512 = F/BW/VL/DQ

// Everything that steers the backend's kernels. The kernels read only these fields (through the backend
// they were created by), never the environment: x86_options_from_env is the one place that does.
struct X86Options {
  // ISA caps. VITRT_MAX_ISA=avx2|avx512|none|ref lowers max_isa (never raises it); VITRT_FORCE_REF=1 (any
  // value but empty or "0") sets force_ref, with which the backend is not available at all.
  X86Isa max_isa = X86Isa::kAvx512;  // cap (dnnl_set_max_cpu_isa-style); the CPU may offer less
  bool force_ref = false;
  // Session precision bf16 (SessionOptions::precision): Linear on the AVX512-BF16 GEMM where the CPU has it
  // and the ISA in use is AVX-512; elsewhere everything stays fp32 and precision_report() says why.
  bool bf16 = false;
  // Under bf16, the AMX tiles where the CPU has AMX-BF16 (x86_has_amx_bf16); VITRT_X86_AMX=0 turns them off
  // (the AVX512-BF16 tiles then run everything). amx_model (VITRT_X86_AMX=model) runs the AMX kernel on a
  // C++ model of the tile instructions instead, on any CPU with AVX512-BF16: slow, for tests.
  bool use_amx = true;
  bool amx_model = false;
  // Tuning knobs, for measurements and tests.
  bool verbose = false;     // VITRT_X86_VERBOSE (set at all): print each Linear/Conv2d/ConvMlp kernel choice
  bool use_onednn = false;  // VITRT_X86_ONEDNN=1: oneDNN's Linear and dense NCHW Conv2d, if built in
  int gemm_tile = -1;       // VITRT_GEMM_TILE=0..2: force that AVX-512 register tile; -1: least padding
  int conv_mlp_rows = 0;    // VITRT_CONV_MLP_ROWS=N: ConvMlp band rows (at least 1); 0: from the widths
  int64_t newton_packed_min_m = 384;  // VITRT_X86_NEWTON_PACKED_MIN_M: landmarks from which Newton steps
                                      // run on the packed GEMM
  // Multiply-adds each thread must have before MatMul splits a product over threads (matmul.cpp says why);
  // tests lower it to 1 so that small odd shapes still run their multi-thread split.
  int64_t matmul_min_macs_per_thread = int64_t{1} << 22;
  // What create_x86_backend and x86_effective_isa take from the environment (x86_options_from_env):
  bool read_env = true;         // the ISA caps VITRT_FORCE_REF and VITRT_MAX_ISA
  bool read_env_tuning = true;  // the tuning knobs above (a variable that is set overrides the field)
};

// `base` with the VITRT_* environment variables that are set applied, as far as base.read_env and
// base.read_env_tuning allow. The only function of the backend that reads the environment.
X86Options x86_options_from_env(const X86Options& base = X86Options{});

// The ISA the CPU (and OS) supports, ignoring caps.
X86Isa x86_detect_isa();
// min(CPU, options.max_isa, VITRT_MAX_ISA); kNone when force_ref or VITRT_FORCE_REF=1 (with read_env).
X86Isa x86_effective_isa(const X86Options& options);
const char* x86_isa_name(X86Isa isa);
// AVX-512 (as x86_detect_isa) and AVX512-BF16, ignoring caps.
bool x86_has_avx512_bf16();
// AVX-512 executed as two 256-bit halves: AMD Zen 4 (family 19h with AVX-512), one 512-bit FMA a cycle where
// Zen 5 and Intel have two. The packed GEMM's tile choice depends on it (packed_gemm.cpp).
bool x86_avx512_is_split();
// AVX512-BF16 and AMX-TILE + AMX-BF16, with the OS managing the tile state and this process allowed to use
// it (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM), asked once, here). Ignoring caps.
bool x86_has_amx_bf16();

// nullptr when the effective ISA is kNone (no AVX2+FMA, force_ref, or capped below avx2): the caller then
// uses the reference backend.
std::unique_ptr<Backend> create_x86_backend(const X86Options& options = X86Options{});

}  // namespace vitrt
