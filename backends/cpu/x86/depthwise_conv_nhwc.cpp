// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Channels-last depthwise Conv2d (src [B,H,W,C], groups = C = Cout): the token-major form the planner's
// channels_last_conv pass gives the PVT v2 / LaViT MLP conv, so the tokens need no transpose either side.
// Each output pixel is C contiguous floats: the channel loop vectorises (16 channels per AVX-512 register)
// and every tap is one contiguous multiply-add over the channels. Weights are repacked once to [kh][kw][C].
// Output rows (b, oy) are split over the threads; the epilogue activation runs on each pixel while it is in
// cache.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

struct RowArgs {
  const float* src;  // image b: [H,W,C]
  int64_t h, w, c;
  const float* wt;  // [kh][kw][C]
  int64_t kh, kw;
  const float* bias;  // [C] or null
  const Conv2dAttrs* a;
  int64_t oy, wo;
  float* dst;  // output row: [Wo,C]
};

// One output pixel over channels [c0, c0 + kBlock): the accumulators stay in registers across the taps (4
// AVX-512 or 8 AVX2 registers), so each tap costs one load of the input, one of the weights and one FMA per
// vector.
constexpr int64_t kBlock = 64;

__attribute__((always_inline)) inline void depthwise_pixel_block(const RowArgs& r, int64_t ox, int64_t c0,
                                                                 float* __restrict y) {
  const Conv2dAttrs& a = *r.a;
  float acc[kBlock];
  for (int64_t i = 0; i < kBlock; ++i) acc[i] = r.bias ? r.bias[c0 + i] : 0.0f;
  for (int64_t ky = 0; ky < r.kh; ++ky) {
    const int64_t iy = r.oy * a.stride_h - a.pad_h + ky * a.dilation_h;
    if (iy < 0 || iy >= r.h) continue;
    for (int64_t kx = 0; kx < r.kw; ++kx) {
      const int64_t ix = ox * a.stride_w - a.pad_w + kx * a.dilation_w;
      if (ix < 0 || ix >= r.w) continue;
      const float* __restrict x = r.src + (iy * r.w + ix) * r.c + c0;
      const float* __restrict k = r.wt + (ky * r.kw + kx) * r.c + c0;
      for (int64_t i = 0; i < kBlock; ++i) acc[i] += x[i] * k[i];
    }
  }
  for (int64_t i = 0; i < kBlock; ++i) y[c0 + i] = acc[i];
}

// The channels past the last full block, accumulated in the output pixel itself.
__attribute__((always_inline)) inline void depthwise_pixel_tail(const RowArgs& r, int64_t ox, int64_t c0,
                                                                float* __restrict y) {
  const Conv2dAttrs& a = *r.a;
  for (int64_t i = c0; i < r.c; ++i) y[i] = r.bias ? r.bias[i] : 0.0f;
  for (int64_t ky = 0; ky < r.kh; ++ky) {
    const int64_t iy = r.oy * a.stride_h - a.pad_h + ky * a.dilation_h;
    if (iy < 0 || iy >= r.h) continue;
    for (int64_t kx = 0; kx < r.kw; ++kx) {
      const int64_t ix = ox * a.stride_w - a.pad_w + kx * a.dilation_w;
      if (ix < 0 || ix >= r.w) continue;
      const float* __restrict x = r.src + (iy * r.w + ix) * r.c;
      const float* __restrict k = r.wt + (ky * r.kw + kx) * r.c;
      for (int64_t i = c0; i < r.c; ++i) y[i] += x[i] * k[i];
    }
  }
}

__attribute__((always_inline)) inline void depthwise_row(const RowArgs& r) {
  const int64_t full = r.c / kBlock * kBlock;
  for (int64_t ox = 0; ox < r.wo; ++ox) {
    float* y = r.dst + ox * r.c;
    for (int64_t c0 = 0; c0 < full; c0 += kBlock) depthwise_pixel_block(r, ox, c0, y);
    if (full < r.c) depthwise_pixel_tail(r, ox, full, y);
  }
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) void depthwise_row_avx512(const RowArgs& r) {
  depthwise_row(r);
}
__attribute__((target("avx2,fma"))) void depthwise_row_avx2(const RowArgs& r) {
  depthwise_row(r);
}

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
    const float* px = x.f32();
    float* py = y.f32();
    const Conv2dAttrs& a = a_;
    const SimdTable* simd = ctx_->simd;
    auto row = ctx_->isa == X86Isa::kAvx512 ? depthwise_row_avx512 : depthwise_row_avx2;
    const float* wt = wt_.data();
    const int64_t kh = w.shape[2], kw = w.shape[3];
    ThreadPool::parallel_for(
        batch * ho, run_threads(args, planned_threads_), [&](int64_t lo, int64_t hi, int) {
          for (int64_t r = lo; r < hi; ++r) {
            const int64_t b = r / ho, oy = r % ho;
            float* dst = py + r * wo * c;
            row(RowArgs{px + b * h * wd * c, h, wd, c, wt, kh, kw, bias, &a, oy, wo, dst});
            switch (a.activation) {
              case Activation::kNone:
                break;
              case Activation::kRelu:
                simd->relu(dst, dst, wo * c);
                break;
              case Activation::kGeluErf:
                simd->gelu(dst, dst, wo * c, false);
                break;
              case Activation::kGeluTanh:
                simd->gelu(dst, dst, wo * c, true);
                break;
            }
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
                                   std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Tensor* w = plan.src_tensors[1];
  const Shape& ws = plan.src_shapes[1];
  const Shape& xs = plan.src_shapes[0];
  if (!a->channels_last || !ref::activation_valid(a->activation) || xs.rank != 4 || ws.rank != 4 ||
      ws[1] != 1 || a->groups != xs[3] || ws[0] != xs[3] || !w || !w->is_constant || !w->constant.data ||
      w->constant.size != static_cast<size_t>(ws.numel()) * sizeof(float))
    return Status::Ok();  // dense or grouped channels-last, or computed weights: the reference kernel
  const int64_t c = ws[0], kh = ws[2], kw = ws[3];
  std::vector<float> wt(static_cast<size_t>(c * kh * kw));
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t k = 0; k < kh * kw; ++k) wt[static_cast<size_t>(k * c + ch)] = w->f32()[ch * kh * kw + k];
  *kernel = std::make_unique<DepthwiseNhwcKernel>(plan, ctx, *a, std::move(wt));
  return Status::Ok();
}

Status create_conv2d_any_layout(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (a->channels_last) return create_conv2d_channels_last(ctx, plan, kernel, info);
  // Depthwise: the direct NCHW kernel in conv2d.cpp; everything else on the packed GEMM (oneDNN, whose
  // execute allocates, with VITRT_X86_ONEDNN=1).
  static const bool onednn = std::getenv("VITRT_X86_ONEDNN") && std::getenv("VITRT_X86_ONEDNN")[0] == '1';
  const Shape& xs = plan.src_shapes[0];
  const Shape& ws = plan.src_shapes[1];
  const bool depthwise = xs.rank == 4 && ws.rank == 4 && a->groups == xs[1] && ws[0] == xs[1] && ws[1] == 1;
  if (depthwise || onednn) return create_conv2d(ctx, plan, kernel, info);
  return create_conv2d_gemm(ctx, plan, kernel, info);
}

}  // namespace x86
}  // namespace vitrt
