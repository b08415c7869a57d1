// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The one place the x86 backend reads the environment: every VITRT_* switch and tuning knob becomes a field
// of X86Options, which the backend hands to its kernels. The names and their parsing are documented (README,
// docs/architecture.md) and used by scripts and tests: keep them as they are.
#include <cstdlib>
#include <cstring>

#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {

X86Options x86_options_from_env(const X86Options& base) {
  X86Options o = base;
  if (base.read_env) {
    const char* force = std::getenv("VITRT_FORCE_REF");
    if (force && *force && std::strcmp(force, "0") != 0) o.force_ref = true;
    const char* cap = std::getenv("VITRT_MAX_ISA");
    if (cap && *cap) {
      X86Isa c = o.max_isa;  // an unknown value leaves the cap alone
      if (std::strcmp(cap, "avx2") == 0)
        c = X86Isa::kAvx2;
      else if (std::strcmp(cap, "avx512") == 0)
        c = X86Isa::kAvx512;
      else if (std::strcmp(cap, "none") == 0 || std::strcmp(cap, "ref") == 0)
        c = X86Isa::kNone;
      if (static_cast<int>(c) < static_cast<int>(o.max_isa)) o.max_isa = c;
    }
  }
  if (base.read_env_tuning) {
    if (std::getenv("VITRT_X86_VERBOSE")) o.verbose = true;
    const char* onednn = std::getenv("VITRT_X86_ONEDNN");
    if (onednn) o.use_onednn = onednn[0] == '1';
    if (const char* tile = std::getenv("VITRT_GEMM_TILE")) {
      const int t = std::atoi(tile);
      o.gemm_tile = t < 0 || t > 2 ? 0 : t;  // out of range: the first tile, as it has always been
    }
    if (const char* rows = std::getenv("VITRT_CONV_MLP_ROWS")) {
      const int r = std::atoi(rows);
      o.conv_mlp_rows = r < 1 ? 1 : r;
    }
    if (const char* m = std::getenv("VITRT_X86_NEWTON_PACKED_MIN_M")) o.newton_packed_min_m = std::atoll(m);
    if (const char* amx = std::getenv("VITRT_X86_AMX")) {
      o.use_amx = std::strcmp(amx, "0") != 0;
      o.amx_model = std::strcmp(amx, "model") == 0;
    }
  }
  return o;
}

}  // namespace vitrt
