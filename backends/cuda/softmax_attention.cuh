// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// SoftmaxAttention on CUDA: a fused flash-style kernel. One block per (query tile of 8 rows, head, batch item),
// one warp per query row; K and V stream through shared memory in tiles of 32 keys (16 when head_dim > 128),
// each lane scores one key, and an online softmax (running max and sum, rescaled accumulators) keeps the whole
// row in registers, so the [Nq,Nk] score matrix never exists. All three AttentionInputs layouts are read in
// place through strides. head_dim <= 256. Not supported yet: the score bias input and the score export output.
#include <memory>

#include "backends/cuda/cuda_common.h"

namespace vitrt {
namespace cuda {

Status create_softmax_attention(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan,
                                std::unique_ptr<Kernel>* kernel, KernelInfo* info);

}  // namespace cuda
}  // namespace vitrt
