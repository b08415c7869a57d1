// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Conv2d (NCHW, not depthwise) on the packed GEMM: per image and group, out[co, p] = W[co, :]·col[:, p] +
// bias[co], where each thread packs the im2col columns of one panel of output pixels straight into the panel
// layout (k × NR in its workspace slot) and multiplies every output channel's weights against it while it is
// in cache. Nothing is allocated at run time; the epilogue activation runs on each finished panel.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

class GemmConvKernel final : public ref::RefKernel {
 public:
  GemmConvKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const Conv2dAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {
    const Shape &w = plan.src_shapes[1], &y = plan.dst_shapes[0];
    gemm_ = gemm_kernels_for(ctx_->isa == X86Isa::kAvx512, w[0] / a.groups, y[2] * y[3]);
  }
  // Workspace: one k × NR panel per planned thread (64-byte aligned slots).
  size_t workspace_bytes(const Shape& w) const {
    return static_cast<size_t>(planned_threads_) * slot_floats(w) * sizeof(float) + 64;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    if (w.shape != planned_src_[1]) return fail("weight shape differs from the plan");
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    const int threads = run_threads(args, planned_threads_);
    if (args.workspace_bytes < workspace_bytes(w.shape)) return fail("workspace smaller than planned");
    float* slots = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(args.workspace) + 63) / 64 * 64);
    const int64_t batch = x.shape[0], cin = x.shape[1], h = x.shape[2], wd = x.shape[3];
    const int64_t cout = w.shape[0], cin_g = w.shape[1], kh = w.shape[2], kw = w.shape[3];
    const int64_t ho = y.shape[2], wo = y.shape[3], pix = ho * wo;
    const int64_t groups = a_.groups, cout_g = cout / groups, k = cin_g * kh * kw;
    const int nr = gemm_->nr;
    const int64_t panels = gemm_panels(pix, nr), slot = slot_floats(w.shape);
    const Conv2dAttrs a = a_;
    const GemmKernels* g = gemm_;
    const SimdTable* simd = ctx_->simd;
    const float* px = x.f32();
    const float* pw = w.f32();
    float* py = y.f32();
    ThreadPool::parallel_for(batch * groups * panels, threads, [&](int64_t lo, int64_t hi, int thread) {
      float* col = slots + thread * slot;
      int64_t iy0[64], ix0[64];  // per panel column: the input corner of its receptive field
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t p = t % panels, bg = t / panels, b = bg / groups, grp = bg % groups;
        const int64_t cols = std::min<int64_t>(nr, pix - p * nr);
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t q = p * nr + j;
          iy0[j] = (q / wo) * a.stride_h - a.pad_h;
          ix0[j] = (q % wo) * a.stride_w - a.pad_w;
        }
        const float* xg = px + (b * cin + grp * cin_g) * h * wd;
        for (int64_t kk = 0; kk < k; ++kk) {
          const int64_t c = kk / (kh * kw), ky = (kk / kw) % kh, kx = kk % kw;
          const float* xc = xg + c * h * wd;
          float* dst = col + kk * nr;
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t iy = iy0[j] + ky * a.dilation_h, ix = ix0[j] + kx * a.dilation_w;
            dst[j] = (iy >= 0 && iy < h && ix >= 0 && ix < wd) ? xc[iy * wd + ix] : 0.0f;
          }
          for (int64_t j = cols; j < nr; ++j) dst[j] = 0.0f;
        }
        GemmPanel gp;
        gp.a = pw + grp * cout_g * k;
        gp.lda = k;
        gp.m = cout_g;
        gp.k = k;
        gp.b = col;
        gp.cols = cols;
        gp.c = py + (b * cout + grp * cout_g) * pix + p * nr;
        gp.ldc = pix;
        gp.bias_rows = bias ? bias + grp * cout_g : nullptr;
        gp.relu = a.activation == Activation::kRelu;
        g->panel(gp);
        if (a.activation == Activation::kGeluErf || a.activation == Activation::kGeluTanh)
          for (int64_t r = 0; r < cout_g; ++r)
            simd->gelu(gp.c + r * pix, gp.c + r * pix, cols, a.activation == Activation::kGeluTanh);
      }
    });
    return Status::Ok();
  }

 private:
  int64_t slot_floats(const Shape& w) const { return (w[1] * w[2] * w[3] * gemm_->nr + 15) / 16 * 16; }

  std::shared_ptr<Context> ctx_;
  Conv2dAttrs a_;
  int planned_threads_;
  const GemmKernels* gemm_ = nullptr;
};

}  // namespace

Status create_conv2d_gemm(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                          std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape& xs = plan.src_shapes[0];
  const Shape& ws = plan.src_shapes[1];
  if (a->channels_last || !ref::activation_valid(a->activation) || xs.rank != 4 || ws.rank != 4 ||
      plan.dst_shapes[0].rank != 4 || xs.numel() == 0)
    return Status::Ok();
  auto k = std::make_unique<GemmConvKernel>(plan, ctx, *a);
  info->workspace_bytes = k->workspace_bytes(ws);
  if (std::getenv("VITRT_X86_VERBOSE"))
    std::fprintf(stderr, "vitrt x86: Conv2d '%s' %s -> %s: im2col panels + packed gemm\n",
                 plan.node->name.c_str(), xs.str().c_str(), plan.dst_shapes[0].str().c_str());
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
