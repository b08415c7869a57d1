// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Add and Mul on CUDA with numpy broadcasting: one thread per output element, input offsets from the
// BroadcastPlan (host_plan.h) made on the host at each run from the actual shapes; a plain path when no operand
// broadcasts.
#include <memory>

#include "backends/cuda/cuda_common.h"

namespace vitrt {
namespace cuda {

Status create_add(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                  KernelInfo* info);
Status create_mul(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                  KernelInfo* info);

}  // namespace cuda
}  // namespace vitrt
