// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Gelu on CUDA, erf or tanh form (torch.nn.functional.gelu, approximate='none' | 'tanh').
#include <memory>

#include "backends/cuda/cuda_common.h"

namespace vitrt {
namespace cuda {

Status create_gelu(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                   KernelInfo* info);

}  // namespace cuda
}  // namespace vitrt
