// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Channels-last depthwise Conv2d (src [B,H,W,C], groups = C = Cout): the token-major form the planner's
// channels_last_conv pass gives the PVT v2 / LaViT MLP conv, so the tokens need no transpose either side.
// Weights are repacked once to [kh][kw][C]; output rows (b, oy) are split over the threads, each computed by
// the ISA's row kernel (depthwise_nhwc_impl.h: register strips of pixels × channels, bias and activation in
// registers).
#include <algorithm>
#include <vector>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/depthwise_nhwc.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

class DepthwiseNhwcKernel final : public ref::RefKernel {
 public:
  DepthwiseNhwcKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const Conv2dAttrs& a,
                      std::vector<float> wt)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        wt_(std::move(wt)),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    if (w.shape != planned_src_[1]) return fail("weight shape " + w.shape.str() + " differs from the plan");
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    const int64_t batch = x.shape[0], h = x.shape[1], wd = x.shape[2], c = x.shape[3];
    const int64_t ho = y.shape[1], wo = y.shape[2];
    auto row = ctx_->isa == X86Isa::kAvx512 ? depthwise_nhwc_row_avx512 : depthwise_nhwc_row_avx2;
    DepthwiseRow base;
    base.h = h;
    base.w = wd;
    base.c = c;
    base.wt = wt_.data();
    base.kh = w.shape[2];
    base.kw = w.shape[3];
    base.stride_h = a_.stride_h;
    base.stride_w = a_.stride_w;
    base.pad_h = a_.pad_h;
    base.pad_w = a_.pad_w;
    base.dilation_h = a_.dilation_h;
    base.dilation_w = a_.dilation_w;
    base.bias = bias;
    base.act = gemm_act(a_.activation);
    base.wo = wo;
    const float* px = x.f32();
    float* py = y.f32();
    ThreadPool::parallel_for(batch * ho, run_threads(args, planned_threads_),
                             [&](int64_t lo, int64_t hi, int) {
                               DepthwiseRow r = base;
                               for (int64_t i = lo; i < hi; ++i) {
                                 r.src = px + i / ho * h * wd * c;
                                 r.oy = i % ho;
                                 r.dst = py + i * wo * c;
                                 row(r);
                               }
                             });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  Conv2dAttrs a_;
  std::vector<float> wt_;  // [kh][kw][C]
  int planned_threads_;
};

}  // namespace

Status create_conv2d_channels_last(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                   std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (a->groups == 1) return create_conv2d_nhwc_gemm(ctx, plan, kernel, info);  // dense
  const Tensor* w = plan.src_tensors[1];
  const Shape& ws = plan.src_shapes[1];
  const Shape& xs = plan.src_shapes[0];
  if (!a->channels_last || !ref::activation_valid(a->activation) || xs.rank != 4 || ws.rank != 4 ||
      ws[1] != 1 || a->groups != xs[3] || ws[0] != xs[3] || !w || !w->is_constant || !w->constant.data ||
      w->constant.size != static_cast<size_t>(ws.numel()) * sizeof(float))
    return Status::Ok();  // grouped channels-last, or computed weights: the reference kernel
  const int64_t c = ws[0], kh = ws[2], kw = ws[3];
  std::vector<float> wt(static_cast<size_t>(c * kh * kw));
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t k = 0; k < kh * kw; ++k) wt[static_cast<size_t>(k * c + ch)] = w->f32()[ch * kh * kw + k];
  *kernel = std::make_unique<DepthwiseNhwcKernel>(plan, ctx, *a, std::move(wt));
  info->reentrant = true;  // compute keeps no state
  return Status::Ok();
}

Status create_conv2d_any_layout(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  // A residual input (fuse_epilogue's, on NCHW convs that are not depthwise) only the packed GEMM takes.
  const bool residual = plan.num_src > 3 && plan.src_shapes[3].rank > 0;
  if (a->channels_last) return residual ? Status::Ok() : create_conv2d_channels_last(ctx, plan, kernel, info);
  // Depthwise: the direct NCHW kernel in conv2d.cpp; everything else on the packed GEMM (or oneDNN, whose
  // execute allocates, with options.use_onednn; what it declines runs on the packed GEMM).
  const Shape& xs = plan.src_shapes[0];
  const Shape& ws = plan.src_shapes[1];
  const bool depthwise = xs.rank == 4 && ws.rank == 4 && a->groups == xs[1] && ws[0] == xs[1] && ws[1] == 1;
  if (depthwise) return residual ? Status::Ok() : create_conv2d_depthwise(ctx, plan, kernel, info);
  if (ctx->alt && !residual) {
    VITRT_RETURN_IF_ERROR(ctx->alt->create_conv2d(plan, kernel, info));
    if (*kernel) return Status::Ok();
    *info = KernelInfo{};
  }
  return create_conv2d_gemm(ctx, plan, kernel, info);
}

}  // namespace x86
}  // namespace vitrt
