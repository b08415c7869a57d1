// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Factories of the reference CPU kernels, one per op (backends/cpu/ref/<op>.cpp). Each checks the node's
// attributes and planned shapes, may precompute (packed weights, owned by the kernel) and reports the
// workspace it needs at the planned maximum batch.
#include <memory>

#include "backends/backend.h"

namespace vitrt {
namespace ref {

using KernelFactory = Status (*)(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);

Status create_conv2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_batch_norm2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_linear(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_layer_norm(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_gelu(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_relu(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_add(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_mul(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_concat(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_slice(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_reshape(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_transpose(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_reduce_mean(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_matmul(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_sub(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_div(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_exp(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_reduce_sum(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_reduce_max(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_softmax(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_softmax_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_adaptive_avg_pool2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_linear_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_reused_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_attention_residual(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_conv_mlp(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_unary(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_pow(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_min(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_max(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_fmod(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_mod(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_prelu(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_lrn(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_resize(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_external_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_performer_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_nystrom_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_selective_kernel(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_fastformer_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_pool2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_reduce(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_log_softmax(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_instance_norm(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_compare(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_where(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_pad(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_expand(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_squeeze_excite(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_kernelized_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_conv_transpose(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_arg_max(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_trilu(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_cum_sum(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_gather_elements(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_scatter_nd(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);
Status create_top_k(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info);

}  // namespace ref
}  // namespace vitrt
