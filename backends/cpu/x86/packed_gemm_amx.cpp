// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The bf16 AMX kernel (packed_gemm_amx_impl.h) on the hardware's tiles; built with -mamx-tile -mamx-bf16 on
// top of the AVX512-BF16 flags, only called where x86_has_amx_bf16() (cpu_features.cpp: CPUID, the OS's tile
// state and the process's permission to use it).
#include <immintrin.h>

#include "backends/cpu/x86/packed_gemm_amx_impl.h"

namespace vitrt {
namespace x86 {
namespace {

// The tile intrinsics take the tile number as a literal (GCC pastes it into the instruction), hence the
// dispatch on T. The compiler barriers before each tile load and the configuration: those asm statements do
// not tell the compiler that they read memory, so the staging copies and the configuration written just
// before would otherwise not be known to be needed.
#define VITRT_AMX_BARRIER() __asm__ volatile("" ::: "memory")

struct AmxTiles {
  static void configure(const amx::TileConfig& c) {
    VITRT_AMX_BARRIER();
    _tile_loadconfig(&c);
  }
  template <int T>
  static void zero() {
    if constexpr (T == 0) _tile_zero(0);
    if constexpr (T == 1) _tile_zero(1);
    if constexpr (T == 2) _tile_zero(2);
    if constexpr (T == 3) _tile_zero(3);
  }
  template <int T>
  static void load(const void* base, int64_t stride) {
    VITRT_AMX_BARRIER();
    if constexpr (T == 4) _tile_loadd(4, base, stride);
    if constexpr (T == 5) _tile_loadd(5, base, stride);
    if constexpr (T == 6) _tile_loadd(6, base, stride);
    if constexpr (T == 7) _tile_loadd(7, base, stride);
  }
  template <int T>
  static void store(void* base, int64_t stride) {
    if constexpr (T == 0) _tile_stored(0, base, stride);
    if constexpr (T == 1) _tile_stored(1, base, stride);
    if constexpr (T == 2) _tile_stored(2, base, stride);
    if constexpr (T == 3) _tile_stored(3, base, stride);
    VITRT_AMX_BARRIER();
  }
  template <int C, int A, int B>
  static void dot() {
    if constexpr (C == 0 && A == 4 && B == 6) _tile_dpbf16ps(0, 4, 6);
    if constexpr (C == 1 && A == 4 && B == 7) _tile_dpbf16ps(1, 4, 7);
    if constexpr (C == 2 && A == 5 && B == 6) _tile_dpbf16ps(2, 5, 6);
    if constexpr (C == 3 && A == 5 && B == 7) _tile_dpbf16ps(3, 5, 7);
    static_assert((C == 0 && A == 4 && B == 6) || (C == 1 && A == 4 && B == 7) ||
                      (C == 2 && A == 5 && B == 6) || (C == 3 && A == 5 && B == 7),
                  "a tile product the kernel does not use");
  }
  static void release() { _tile_release(); }
};

}  // namespace

const GemmKernels* gemm_kernels_amx() {
  static const GemmKernels k = {"amx-bf16 32x32", amx::kMr, amx::kNr, &amx::panel<AmxTiles>};
  return &k;
}

}  // namespace x86
}  // namespace vitrt
