// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What the x86 kernels share: the backend context (ISA table, options, the lent oneDNN kernels if any) and
// the per-op factories. A factory that leaves *kernel empty declines the node, which then runs on the
// reference kernel.
#include <memory>

#include "backends/cpu/x86/alt_kernels.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/simd.h"
#include "backends/cpu/x86/thread_pool.h"
#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace x86 {

// Whether input i of the planned node is a float32 constant with all its data: what a kernel needs to pack a
// weight once, at plan time. Kernels decline (the reference runs) weights computed at run time.
inline bool constant_input(const KernelPlan& plan, int i) {
  const Tensor* t = i < plan.num_src ? plan.src_tensors[i] : nullptr;
  return t && t->is_constant && t->constant.data &&
         t->constant.size == static_cast<size_t>(plan.src_shapes[i].numel()) * sizeof(float);
}

struct Context {
  X86Isa isa = X86Isa::kNone;
  const SimdTable* simd = nullptr;
  X86Options options;               // resolved (environment applied): the kernels' knobs
  bool bf16 = false;                // options.bf16, the ISA in use is AVX-512 and the CPU has AVX512-BF16
  // Under bf16, the AMX kernel the bf16 GEMM's callers take (gemm_kernels_bf16_for), or null: the tiles
  // where options.use_amx and x86_has_amx_bf16(), their model where options.amx_model (tests): amx_kernels.
  const GemmKernels* amx = nullptr;
  std::unique_ptr<AltKernels> alt;  // oneDNN's Linear/Conv2d when options.use_onednn and built in
};

// The AMX kernel a bf16 session on AVX512-BF16 takes, as Context::amx says (x86_backend.cpp).
const GemmKernels* amx_kernels(const X86Options& o);

using Factory = Status (*)(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                           std::unique_ptr<Kernel>* kernel, KernelInfo* info);

// Linear and Conv2d on the packed GEMM (gemm_linear.cpp, gemm_conv2d.cpp), and the entries that pick them
// (ctx->alt, i.e. oneDNN, with options.use_onednn).
Status create_linear_gemm(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                          KernelInfo*);
Status create_linear_any(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                         KernelInfo*);
Status create_conv2d_gemm(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                          KernelInfo*);
// MatMul on the packed GEMM: a constant b packed at plan time, a run-time b per panel (matmul.cpp).
Status create_matmul(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                     KernelInfo*);
// Depthwise NCHW Conv2d, direct (conv2d.cpp).
Status create_conv2d_depthwise(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                               KernelInfo*);
// Channels-last convolutions: depthwise (depthwise_conv_nhwc.cpp, which also picks) and dense on the packed
// GEMM (gemm_conv2d_nhwc.cpp); and the Conv2d entry that picks by layout.
Status create_conv2d_nhwc_gemm(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                               KernelInfo*);
Status create_conv2d_channels_last(const std::shared_ptr<Context>&, const KernelPlan&,
                                   std::unique_ptr<Kernel>*, KernelInfo*);
Status create_conv2d_any_layout(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                                KernelInfo*);
// The Conv2d entry: under session precision bf16 dense channels-last convs on the bf16 packed GEMM
// (gemm_conv2d_bf16.cpp), everything else create_conv2d_any_layout.
Status create_conv2d_any_precision(const std::shared_ptr<Context>&, const KernelPlan&,
                                   std::unique_ptr<Kernel>*, KernelInfo*);
Status create_layer_norm(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                         KernelInfo*);
Status create_gelu(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*, KernelInfo*);
Status create_binary(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                     KernelInfo*);
Status create_softmax(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                      KernelInfo*);
Status create_softmax_attention(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                                KernelInfo*);
Status create_transpose(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                        KernelInfo*);
Status create_linear_attention(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                               KernelInfo*);
Status create_reused_attention(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                               KernelInfo*);
Status create_attention_residual(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                                 KernelInfo*);
// The fused PVT v2 / LaViT MLP, row-pipelined (conv_mlp.cpp).
Status create_conv_mlp(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                       KernelInfo*);
// Pool2d, a vector of output columns at a time (pool2d.cpp).
Status create_pool2d(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                     KernelInfo*);

// SqueezeExcite: the channel means and the scale over the same planes per thread (squeeze_excite.cpp).
Status create_squeeze_excite(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                             KernelInfo*);

// ConvTranspose: packed GEMM panels, then col2im, threaded over (image, group) (conv_transpose.cpp).
Status create_conv_transpose(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                             KernelInfo*);
// ArgMax / ArgMin, threaded over the output (arg_max.cpp).
Status create_arg_max(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                      KernelInfo*);
// Unary, threaded over contiguous chunks, vectorised where exact (unary.cpp).
Status create_unary(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                    KernelInfo*);
// Trilu, threaded over matrix rows (trilu.cpp).
// CumSum, threaded over slices and column blocks (cum_sum.cpp).
Status create_cum_sum(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                      KernelInfo*);
// GatherElements, threaded over output rows (gather_elements.cpp).
Status create_gather_elements(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                              KernelInfo*);
// TopK, threaded over the lines of the axis (top_k.cpp).
Status create_top_k(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                    KernelInfo*);
Status create_trilu(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                    KernelInfo*);
// Resize of the last two axes, one (batch, channel) plane per task (resize.cpp); other forms decline.
Status create_resize(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                     KernelInfo*);
// ExternalAttention: logits and products on the packed GEMM, threaded over (batch, head, token block)
// (external_attention.cpp).
Status create_external_attention(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                                 KernelInfo*);
// PerformerAttention on the packed GEMM, (batch, head) items or token blocks per task
// (performer_attention.cpp).
Status create_performer_attention(const std::shared_ptr<Context>&, const KernelPlan&,
                                  std::unique_ptr<Kernel>*, KernelInfo*);
// Nyströmformer attention, threaded over (batch, head) items (nystrom_attention.cpp).
Status create_nystrom_attention(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                                KernelInfo*);
// SelectiveKernel: the branch planes split over the threads for the means and for the weighted sum, the
// small select step per image between them (selective_kernel.cpp).
Status create_selective_kernel(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                               KernelInfo*);
// FastformerAttention in streaming passes over tokens, threaded over (batch, token block)
// (fastformer_attention.cpp).
Status create_fastformer_attention(const std::shared_ptr<Context>&, const KernelPlan&,
                                   std::unique_ptr<Kernel>*, KernelInfo*);
// KernelizedAttention, threaded over (image, head), the products on LinearAttention's FMA row loops
// (kernelized_attention.cpp).
Status create_kernelized_attention(const std::shared_ptr<Context>&, const KernelPlan&,
                                   std::unique_ptr<Kernel>*, KernelInfo*);

// Threads a kernel may use at run time: the session's request, never more than planned (workspace is sized
// per planned thread).
inline int run_threads(const KernelArgs& args, int planned) {
  int n = args.num_threads < 1 ? 1 : args.num_threads;
  return n < planned ? n : planned;
}

}  // namespace x86
}  // namespace vitrt
