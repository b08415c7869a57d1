// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// LayerNorm over the last axis on CUDA: one warp per row, two passes (mean, then the biased variance around
// it), statistics in double as the reference does, each output rounded to float once.
#include <memory>

#include "backends/cuda/cuda_common.h"

namespace vitrt {
namespace cuda {

Status create_layer_norm(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan,
                         std::unique_ptr<Kernel>* kernel, KernelInfo* info);

}  // namespace cuda
}  // namespace vitrt
