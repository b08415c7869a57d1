// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Conv2d under session precision bf16 (ctx->bf16, docs/architecture.md §7.1): dense channels-last convs (src
// [B,H,W,Cin], groups 1: the PVT v2 / LaViT / SOFT patch embeddings and spatial reductions, which the
// planner's channels_last_conv pass makes channels-last) on the AVX512-BF16 packed GEMM (packed_gemm_bf16.h).
// The fp32 form is gemm_conv2d_nhwc.cpp's: every output pixel is one GEMM row, its patch the kh·kw·Cin input
// values under the kernel in (ky, kx, c) order (zero outside the image), the weight reordered to
// [Cout][kh][kw][Cin], on at least kMinChannels input channels or on non-overlapping patches. Here the weight
// is rounded into bf16 pair panels at plan time, and each task gathers a chunk of patch rows, one row at a
// time into an fp32 row in L1 that is then rounded into pairs (vcvtne2ps2bf16), and multiplies the chunk
// against every panel while it is in L2; bias and activation in fp32, in registers. Everything else (NCHW
// convs, grouped and depthwise ones, a fused residual) takes the fp32 kernels (create_conv2d_any_layout).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/conv_nhwc_patch.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kChunkBytes = 256 << 10;  // the patch pairs one task gathers and multiplies, kept in L2
// Convs on fewer input channels stay fp32: the stems (raw pixels; SOFT's 32-channel stem convs at 112²) and
// the first stages' 64-channel convs round activations that then pass through every block. With them in bf16
// SOFT-Tiny's random-init logits (tests/models/bf16_session_test.cpp) moved by 2.35% of the largest logit,
// past the 2e-2 bound; with 64 channels and up 1.97%, 128 and up 1.63% (1.56% with every conv fp32).
// LaViT-Tiny's: 1.20% with every conv bf16.
constexpr int64_t kMinChannels = 128;

// A conv on non-overlapping patches (kernel = stride, no padding, no dilation) is a Linear on the patches:
// each input value enters one patch row once, as a Linear's input does, and the Linears run bf16 at every
// width. It runs bf16 whatever its input channels: the ViT / DeiT patch embedding (3 channels, 16×16 / 16)
// and PVT v2 / LaViT's first-stage spatial reductions (64 channels, 8×8 / 8). The stems and the 64-channel
// convs above are overlapping (3×3 stride 2, 7×7 stride 4).
bool non_overlapping_patches(const Conv2dAttrs& a, const Shape& ws) {
  return a.stride_h == ws[2] && a.stride_w == ws[3] && a.pad_h == 0 && a.pad_w == 0 && a.dilation_h == 1 &&
         a.dilation_w == 1;
}

class GemmConvNhwcBf16Kernel final : public ref::RefKernel {
 public:
  GemmConvNhwcBf16Kernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const Conv2dAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {
    const Shape &ws = plan.src_shapes[1], &ys = plan.dst_shapes[0];
    n_ = ws[0];
    cin_ = ws[1];
    kh_ = ws[2];
    kw_ = ws[3];
    k_ = kh_ * kw_ * cin_;
    kp_ = gemm_bf16_pairs(k_);
    pointwise_ = kh_ == 1 && kw_ == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_h == 0 && a.pad_w == 0;
    gemm_ = gemm_kernels_bf16_for(ys.numel() / n_, n_, kp_, ctx_->options.gemm_tile, ctx_->amx);
    const int mr = gemm_->mr;
    chunk_rows_ = std::max<int64_t>(mr, kChunkBytes / (kp_ * 4) / mr * mr);
    const std::vector<float> reordered =
        reorder_weight_for_patches(plan.src_tensors[1]->f32(), n_, cin_, kh_, kw_);
    packed_ = AlignedFloats(static_cast<size_t>(gemm_packed_floats(n_, kp_, gemm_->nr)));
    bias_ = AlignedFloats(static_cast<size_t>(gemm_panels(n_, gemm_->nr) * gemm_->nr));
    if (packed_) gemm_bf16_pack_transposed(reordered.data(), n_, k_, gemm_->nr, packed_.data());
  }
  bool ok() const { return packed_ && bias_; }
  const char* gemm_name() const { return gemm_->name; }
  // Workspace: per planned thread, a chunk of patch rows in pairs and one fp32 patch row (64-byte aligned).
  size_t workspace_bytes() const {
    return static_cast<size_t>(planned_threads_ * slot_floats()) * sizeof(float) + 64;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    if (args.src[1]->shape != planned_src_[1]) return fail("weight shape differs from the plan");
    if (args.workspace_bytes < workspace_bytes()) return fail("workspace smaller than planned");
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    const int64_t h = x.shape[1], wd = x.shape[2], ho = y.shape[1], wo = y.shape[2];
    const int64_t m = y.shape[0] * ho * wo;
    if (m == 0) return Status::Ok();
    if (bias) std::copy(bias, bias + n_, bias_.data());  // zero-padded to whole panels
    const int threads = run_threads(args, planned_threads_);
    // Rows per task: a chunk that stays in L2, but at least one task per thread (whole register tiles).
    const int64_t mr = gemm_->mr, per_thread = ((m + threads - 1) / threads + mr - 1) / mr * mr;
    const int64_t rows = std::min(chunk_rows_, per_thread), chunks = (m + rows - 1) / rows;
    float* slots = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(args.workspace) + 63) / 64 * 64);
    const float* src = x.f32();
    float* dst = y.f32();
    const float* bias_pad = bias ? bias_.data() : nullptr;
    ThreadPool::parallel_for(chunks, threads, [&](int64_t lo, int64_t hi, int tid) {
      float* pairs = slots + tid * slot_floats();
      float* patch = pairs + round16(chunk_rows_ * kp_);
      for (int64_t c = lo; c < hi; ++c) {
        const int64_t r0 = c * rows, r1 = std::min(m, r0 + rows);
        if (pointwise_) {  // the input rows are the patches
          gemm_bf16_pack_rows(src + r0 * cin_, cin_, r1 - r0, cin_, pairs, kp_);
        } else {
          for (int64_t r = r0; r < r1; ++r) {
            gather_patch_row(a_, cin_, kh_, kw_, src, h, wd, ho, wo, r, patch);
            gemm_bf16_pack_rows(patch, k_, 1, k_, pairs + (r - r0) * kp_, kp_);
          }
        }
        for (int64_t p = 0; p < gemm_panels(n_, gemm_->nr); ++p) {
          const int nr = gemm_->nr;
          GemmPanel gp;
          gp.a = pairs;
          gp.lda = kp_;
          gp.m = r1 - r0;
          gp.k = kp_;
          gp.b = packed_.data() + p * kp_ * nr;
          gp.cols = std::min<int64_t>(nr, n_ - p * nr);
          gp.c = dst + r0 * n_ + p * nr;
          gp.ldc = n_;
          gp.bias_cols = bias_pad ? bias_pad + p * nr : nullptr;
          gp.act = gemm_act(a_.activation);
          gemm_->panel(gp);
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t slot_floats() const { return round16(chunk_rows_ * kp_) + round16(k_); }

  std::shared_ptr<Context> ctx_;
  Conv2dAttrs a_;
  int planned_threads_;
  const GemmKernels* gemm_ = nullptr;
  int64_t n_ = 0, cin_ = 0, kh_ = 0, kw_ = 0, k_ = 0, kp_ = 0, chunk_rows_ = 0;  // kp_: k_'s pairs
  bool pointwise_ = false;
  AlignedFloats packed_, bias_;
};

}  // namespace

Status create_conv2d_any_precision(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                   std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  if (!ctx->bf16) return create_conv2d_any_layout(ctx, plan, kernel, info);
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape& xs = plan.src_shapes[0];
  const bool residual = plan.num_src > 3 && plan.src_shapes[3].rank > 0;
  if (!dense_channels_last_conv(plan, *a) || residual ||
      (xs[3] < kMinChannels && !non_overlapping_patches(*a, plan.src_shapes[1])))
    return create_conv2d_any_layout(ctx, plan, kernel, info);  // fp32 (or the reference, which reports it)
  auto k = std::make_unique<GemmConvNhwcBf16Kernel>(plan, ctx, *a);
  if (!k->ok()) return out_of_memory("Conv2d '" + plan.node->name + "': cannot allocate the packed weight");
  if (ctx->options.verbose)
    std::fprintf(stderr, "vitrt x86: Conv2d '%s' %s (channels-last): bf16 packed gemm %s\n",
                 plan.node->name.c_str(), xs.str().c_str(), k->gemm_name());
  info->workspace_bytes = k->workspace_bytes();
  info->copied_srcs = 0b10;  // the weight, packed in bf16 pairs
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
