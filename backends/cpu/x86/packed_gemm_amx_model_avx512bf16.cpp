// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The bf16 AMX kernel (packed_gemm_amx_impl.h) on the plain C++ model of the tile instructions
// (packed_gemm_amx_model.h): for the tests, on any CPU with AVX512-BF16 (the epilogue and the fallback tile).
#include "backends/cpu/x86/packed_gemm_amx_model.h"

namespace vitrt {
namespace x86 {

const GemmKernels* gemm_kernels_amx_model() {
  static const GemmKernels k = {"amx-bf16 32x32 (model)", amx::kMr, amx::kNr, &amx::panel<AmxTileModel>};
  return &k;
}

bool gemm_amx_model_faulted(bool reset) {
  return reset ? AmxTileModel::fault().exchange(false) : AmxTileModel::fault().load();
}

}  // namespace x86
}  // namespace vitrt
