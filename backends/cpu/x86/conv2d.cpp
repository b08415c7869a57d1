// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Depthwise NCHW Conv2d (groups = Cin = Cout): a direct loop, planes split over the threads. The other NCHW
// convolutions run on the packed GEMM (gemm_conv2d.cpp), channels-last ones in gemm_conv2d_nhwc.cpp and
// depthwise_conv_nhwc.cpp.
#include <string>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

// ---- depthwise, direct ----
// One output plane. The row loops vectorise: the body is inlined into an AVX-512 and an AVX2 entry point, and
// the kernel calls the one of the backend's ISA level (so VITRT_MAX_ISA holds here too).
__attribute__((always_inline)) inline void depthwise_plane(const float* xp, int64_t H, int64_t W,
                                                           const float* wp, int64_t kh, int64_t kw,
                                                           float bias, const Conv2dAttrs& a, float* yp,
                                                           int64_t Ho, int64_t Wo) {
  constexpr int64_t kMaxRow = 1024;
  if (kh == 3 && kw == 3 && a.stride_h == 1 && a.stride_w == 1 && a.pad_h == 1 && a.pad_w == 1 &&
      a.dilation_h == 1 && a.dilation_w == 1 && W <= kMaxRow && Wo == W && Ho == H) {
    // The PVT v2 / LaViT MLP case: each output row in one pass over three zero-padded input rows, nine
    // multiply-adds per element in registers instead of nine read-modify-write sweeps of the output row.
    float rows[3][kMaxRow + 2];
    for (int64_t oy = 0; oy < Ho; ++oy) {
      for (int r = 0; r < 3; ++r) {
        const int64_t iy = oy - 1 + r;
        rows[r][0] = rows[r][W + 1] = 0.0f;
        if (iy < 0 || iy >= H) {
          for (int64_t i = 1; i <= W; ++i) rows[r][i] = 0.0f;
        } else {
          for (int64_t i = 0; i < W; ++i) rows[r][i + 1] = xp[iy * W + i];
        }
      }
      float* yr = yp + oy * Wo;
      const float* r0 = rows[0];
      const float* r1 = rows[1];
      const float* r2 = rows[2];
      for (int64_t ox = 0; ox < Wo; ++ox) {
        float acc = bias;
        acc += wp[0] * r0[ox] + wp[1] * r0[ox + 1] + wp[2] * r0[ox + 2];
        acc += wp[3] * r1[ox] + wp[4] * r1[ox + 1] + wp[5] * r1[ox + 2];
        acc += wp[6] * r2[ox] + wp[7] * r2[ox + 1] + wp[8] * r2[ox + 2];
        yr[ox] = acc;
      }
    }
    return;
  }
  for (int64_t i = 0; i < Ho * Wo; ++i) yp[i] = bias;
  for (int64_t oy = 0; oy < Ho; ++oy) {
    float* yr = yp + oy * Wo;
    for (int64_t ky = 0; ky < kh; ++ky) {
      const int64_t iy = oy * a.stride_h - a.pad_h + ky * a.dilation_h;
      if (iy < 0 || iy >= H) continue;
      const float* xr = xp + iy * W;
      for (int64_t kx = 0; kx < kw; ++kx) {
        const float wv = wp[ky * kw + kx];
        const int64_t off = kx * a.dilation_w - a.pad_w;
        // ox range with 0 <= ox*s + off < W
        const int64_t lo_x = off >= 0 ? 0 : (-off + a.stride_w - 1) / a.stride_w;
        int64_t hi_x = W - off <= 0 ? 0 : (W - off - 1) / a.stride_w + 1;
        if (hi_x > Wo) hi_x = Wo;
        if (a.stride_w == 1) {
          const float* xs = xr + off;
          for (int64_t ox = lo_x; ox < hi_x; ++ox) yr[ox] += wv * xs[ox];
        } else {
          for (int64_t ox = lo_x; ox < hi_x; ++ox) yr[ox] += wv * xr[ox * a.stride_w + off];
        }
      }
    }
  }
}

using DepthwisePlaneFn = void (*)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float,
                                  const Conv2dAttrs&, float*, int64_t, int64_t);

__attribute__((target("avx512f,avx512vl,avx2,fma"))) void depthwise_plane_avx512(
    const float* xp, int64_t H, int64_t W, const float* wp, int64_t kh, int64_t kw, float bias,
    const Conv2dAttrs& a, float* yp, int64_t Ho, int64_t Wo) {
  depthwise_plane(xp, H, W, wp, kh, kw, bias, a, yp, Ho, Wo);
}

__attribute__((target("avx2,fma"))) void depthwise_plane_avx2(const float* xp, int64_t H, int64_t W,
                                                              const float* wp, int64_t kh, int64_t kw,
                                                              float bias, const Conv2dAttrs& a, float* yp,
                                                              int64_t Ho, int64_t Wo) {
  depthwise_plane(xp, H, W, wp, kh, kw, bias, a, yp, Ho, Wo);
}

class DepthwiseKernel final : public ref::RefKernel {
 public:
  DepthwiseKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const Conv2dAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    const int64_t B = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    const int64_t Ho = y.shape[2], Wo = y.shape[3], kh = w.shape[2], kw = w.shape[3];
    const float* px = x.f32();
    const float* pw = w.f32();
    float* py = y.f32();
    const Conv2dAttrs a = a_;
    const DepthwisePlaneFn plane =
        ctx_->isa == X86Isa::kAvx512 ? depthwise_plane_avx512 : depthwise_plane_avx2;
    ThreadPool::parallel_for(B * C, run_threads(args, planned_threads_), [&](int64_t lo, int64_t hi, int) {
      for (int64_t bc = lo; bc < hi; ++bc) {
        const int64_t ch = bc % C;
        float* yp = py + bc * Ho * Wo;
        plane(px + bc * H * W, H, W, pw + ch * kh * kw, kh, kw, bias ? bias[ch] : 0.0f, a, yp, Ho, Wo);
        ref::apply_activation(a.activation, yp, Ho * Wo);
      }
    });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  Conv2dAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_conv2d_depthwise(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                               std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape& xs = plan.src_shapes[0];
  const Shape& ws = plan.src_shapes[1];
  if (!ref::activation_valid(a->activation) || xs.rank != 4 || ws.rank != 4 || plan.dst_shapes[0].rank != 4 ||
      a->groups < 1 || a->stride_h < 1 || a->stride_w < 1 || a->dilation_h < 1 || a->dilation_w < 1 ||
      a->pad_h < 0 || a->pad_w < 0 || xs.numel() == 0 || plan.dst_shapes[0].numel() == 0)
    return Status::Ok();  // the reference handles (or reports) it
  if (a->groups == xs[1] && ws[0] == xs[1] && ws[1] == 1)
    *kernel = std::make_unique<DepthwiseKernel>(plan, ctx, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
