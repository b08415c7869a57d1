// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Channels-last dense Conv2d (src [B,H,W,Cin], groups 1) on the packed GEMM: every output pixel is one row,
// out[(b,oy,ox), co] = patch(b,oy,ox) · W'[co] + bias[co], where the patch is the kh·kw·Cin input values
// under the kernel in (ky, kx, c) order (zero outside the image) and W' the weight reordered to
// [Cout][kh][kw][Cin], packed into column panels at plan time like a Linear weight. This is the form the
// planner's channels_last_conv pass gives the PVT v2 / LaViT spatial-reduction and patch-embedding convs
// that sit between tokens: the tokens need no transpose, and the GEMM's rows are the many pixels rather than
// the few output channels. Each task gathers the patches of a chunk of rows (Cin-contiguous runs) into its
// thread's workspace and multiplies them against every panel while they are in L2; a pointwise conv (1×1,
// stride 1, no padding) multiplies the input rows in place. Bias and activation are applied in registers;
// nothing is allocated at run time.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/conv_nhwc_patch.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kChunkBytes = 256 << 10;  // the patches one task gathers and multiplies, kept in L2

class GemmConvNhwcKernel final : public ref::RefKernel {
 public:
  GemmConvNhwcKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const Conv2dAttrs& a)
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
    pointwise_ = kh_ == 1 && kw_ == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_h == 0 && a.pad_w == 0;
    gemm_ = gemm_kernels_for(ctx_->isa == X86Isa::kAvx512, ys.numel() / n_, n_, k_, ctx_->options.gemm_tile);
    const int mr = gemm_->mr;
    chunk_rows_ = std::max<int64_t>(mr, kChunkBytes / (k_ * 4) / mr * mr);
    const std::vector<float> reordered =
        reorder_weight_for_patches(plan.src_tensors[1]->f32(), n_, cin_, kh_, kw_);
    packed_ = AlignedFloats(static_cast<size_t>(gemm_packed_floats(n_, k_, gemm_->nr)));
    bias_ = AlignedFloats(static_cast<size_t>(gemm_panels(n_, gemm_->nr) * gemm_->nr));
    if (packed_) gemm_pack_transposed(reordered.data(), n_, k_, gemm_->nr, packed_.data());
  }
  bool ok() const { return packed_ && bias_; }
  // Workspace: per planned thread, one chunk of gathered patches (64-byte aligned slots); none if pointwise.
  size_t workspace_bytes() const {
    return pointwise_ ? 0 : static_cast<size_t>(planned_threads_ * slot_floats()) * sizeof(float) + 64;
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
    // Tasks of near-equal rows, each a chunk that stays in L2, as many as make a multiple of the threads:
    // DeiT-Tiny's 16 × 16 patch embedding at batch 1 (196 rows, 84 a chunk) ran 3 chunks, 2 on one thread
    // and no faster on two threads than on one.
    const int64_t chunks = ((m + chunk_rows_ - 1) / chunk_rows_ + threads - 1) / threads * threads;
    float* slots =
        pointwise_ ? nullptr
                   : reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(args.workspace) + 63) / 64 * 64);
    const float* src = x.f32();
    float* dst = y.f32();
    const float* bias_pad = bias ? bias_.data() : nullptr;
    ThreadPool::parallel_for(chunks, threads, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t c = lo; c < hi; ++c) {
        const int64_t r0 = c * m / chunks, r1 = (c + 1) * m / chunks;
        if (r0 >= r1) continue;
        const float* a = src + r0 * cin_;  // pointwise: the input rows are the patches
        if (!pointwise_) {
          float* slot = slots + tid * slot_floats();
          gather(src, h, wd, ho, wo, r0, r1, slot);
          a = slot;
        }
        for (int64_t p = 0; p < gemm_panels(n_, gemm_->nr); ++p) {
          const int nr = gemm_->nr;
          GemmPanel gp;
          gp.a = a;
          gp.lda = k_;
          gp.m = r1 - r0;
          gp.even_rows = true;  // a chunk need not be whole register tiles
          gp.k = k_;
          gp.b = packed_.data() + p * k_ * nr;
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
  int64_t slot_floats() const { return round16(chunk_rows_ * k_); }

  // The patches of output rows [r0, r1), one row of k_ floats each.
  void gather(const float* src, int64_t h, int64_t wd, int64_t ho, int64_t wo, int64_t r0, int64_t r1,
              float* dst) const {
    for (int64_t r = r0; r < r1; ++r)
      gather_patch_row(a_, cin_, kh_, kw_, src, h, wd, ho, wo, r, dst + (r - r0) * k_);
  }

  std::shared_ptr<Context> ctx_;
  Conv2dAttrs a_;
  int planned_threads_;
  const GemmKernels* gemm_ = nullptr;
  int64_t n_ = 0, cin_ = 0, kh_ = 0, kw_ = 0, k_ = 0, chunk_rows_ = 0;
  bool pointwise_ = false;
  AlignedFloats packed_, bias_;
};

}  // namespace

Status create_conv2d_nhwc_gemm(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                               std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape& xs = plan.src_shapes[0];
  if (!dense_channels_last_conv(plan, *a))
    return Status::Ok();  // grouped, computed weights or empty: the reference kernel
  auto k = std::make_unique<GemmConvNhwcKernel>(plan, ctx, *a);
  if (!k->ok()) return out_of_memory("Conv2d '" + plan.node->name + "': cannot allocate the packed weight");
  if (ctx->options.verbose)
    std::fprintf(stderr, "vitrt x86: Conv2d '%s' %s (channels-last): packed gemm\n", plan.node->name.c_str(),
                 xs.str().c_str());
  info->workspace_bytes = k->workspace_bytes();
  info->reentrant = true;    // compute keeps no state; its scratch is the workspace it is given
  info->copied_srcs = 0b10;  // the weight, packed
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
