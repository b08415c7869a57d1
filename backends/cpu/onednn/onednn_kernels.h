// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// oneDNN's Linear and Conv2d for the x86 backend (its AltKernels, alt_kernels.h). Linking this library
// registers the provider (a static initialiser, kept by a link option: see CMakeLists.txt), so sessions with
// X86Options::use_onednn (VITRT_X86_ONEDNN=1) get them.
#include <memory>

#include "backends/cpu/x86/alt_kernels.h"

namespace vitrt {
namespace onednn {

// One oneDNN engine and stream for one backend at `isa` (an AVX2 cap also caps oneDNN, process-wide, before
// its first primitive); nullptr when oneDNN cannot create them.
std::unique_ptr<x86::AltKernels> create_kernels(const X86Options& options, X86Isa isa);

}  // namespace onednn
}  // namespace vitrt
