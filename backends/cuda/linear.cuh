// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Linear on CUDA: y = x·Wᵀ (+ b), then the activation. cublasSgemm on the PyTorch [N,K] weight as it is (no
// repack: the GEMM reads it transposed), then one elementwise epilogue kernel for bias + activation.
#include <memory>

#include "backends/cuda/cuda_common.h"

namespace vitrt {
namespace cuda {

Status create_linear(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan,
                     std::unique_ptr<Kernel>* kernel, KernelInfo* info);

}  // namespace cuda
}  // namespace vitrt
