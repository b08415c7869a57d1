// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// SOFT's Newton–Schulz steps V ← 2V − (V·P)·V (docs/models.md §3.5) on the packed GEMM, for one m×m item on
// the calling thread: P is packed into column panels once, V once per step. Every element of both products is
// summed over k in order from zero with one FMA a step, as the reference's loops and the simd row loops
// (linear_attention_impl.h, still used for small m) do, so all three give the same bits. The row loops
// stream all of V past every 6-row stripe: with m = 784 (SOFT at 896²) V is 2.4 MB, larger than L2, and the
// whole model ran at 49% of the GEMM ceiling on an Intel Xeon with 2 MB of L2 per core; the panels and
// L2-sized row blocks here take it from 11.8 to 7.3 s.
// The symmetric shortcut (only the upper triangle of (V·P)·V, mirrored: 3m³ multiply-adds instead of 4m³)
// was measured and rejected: on ill-conditioned K2 (the PyTorch op cases with close landmarks) its outputs
// drift 6-25x further from PyTorch than float32 rounding allows.
#include <cstdint>

#include "backends/cpu/x86/packed_gemm.h"

namespace vitrt {
namespace x86 {

// Scratch floats for an item of side m whose rows are mp floats apart.
int64_t newton_work_floats(const GemmKernels* g, int64_t m, int64_t mp);

// p, v: [m][mp] row-major; v is iterated in place, its padding columns [m, mp) left as they are.
// work: newton_work_floats floats, 64-byte aligned.
void newton_iterate(const GemmKernels* g, const float* p, int64_t m, int64_t mp, int32_t iterations, float* v,
                    float* work);

}  // namespace x86
}  // namespace vitrt
