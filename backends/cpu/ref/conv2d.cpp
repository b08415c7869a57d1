// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Conv2d (zero padding, stride, dilation, groups), bias, residual and epilogue activation: act(conv + bias +
// residual), each element summed in that order (the unfused Add and activation give the same bits).
//
// Per image and group: im2col into the workspace, col[(c·kh + ky)·kw + kx, oy·Wo + ox], then for each output
// channel y[co, :] = bias + Σ_kk W[co, kk] · col[kk, :], accumulated in float over contiguous rows
// (vectorises). A 1x1, stride-1, unpadded convolution reads the input directly. Channels-last tensors are
// computed directly, per output pixel, with the sum in the same (c, ky, kx) order.
#include <cstring>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class Conv2dKernel final : public RefKernel {
 public:
  Conv2dKernel(const KernelPlan& plan, const Conv2dAttrs& a) : RefKernel(plan), a_(a) {}

  static bool pointwise(const Conv2dAttrs& a, const Shape& w) {
    return w[2] == 1 && w[3] == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_h == 0 && a.pad_w == 0;
  }
  // Workspace floats for one image and group.
  static int64_t col_floats(const Conv2dAttrs& a, const Shape& w, const Shape& y) {
    return pointwise(a, w) || a.channels_last ? 0 : w[1] * w[2] * w[3] * y[2] * y[3];
  }

 protected:
  Status compute(const KernelArgs& args) override {
    if (a_.channels_last) return compute_channels_last(args);
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const float* residual = args.num_src > 3 && args.src[3] ? args.src[3]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    const int64_t batch = x.shape[0], cin = x.shape[1], h = x.shape[2], wd = x.shape[3];
    const int64_t cout = w.shape[0], cin_g = w.shape[1], kh = w.shape[2], kw = w.shape[3];
    const int64_t ho = y.shape[2], wo = y.shape[3], p = ho * wo;
    const int64_t groups = a_.groups, cout_g = cout / groups, kc = cin_g * kh * kw;
    const bool direct = pointwise(a_, w.shape);
    VITRT_RETURN_IF_ERROR(check_workspace(args, col_floats(a_, w.shape, y.shape)));
    float* col = static_cast<float*>(args.workspace);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t g = 0; g < groups; ++g) {
        const float* xg = x.f32() + (b * cin + g * cin_g) * h * wd;
        const float* cols = xg;  // [kc, p]
        if (!direct) {
          im2col(xg, cin_g, h, wd, kh, kw, ho, wo, col);
          cols = col;
        }
        for (int64_t co = g * cout_g; co < (g + 1) * cout_g; ++co) {
          float* yr = y.f32() + (b * cout + co) * p;
          const float bv = bias ? bias[co] : 0.0f;
          for (int64_t i = 0; i < p; ++i) yr[i] = bv;
          const float* wr = w.f32() + co * kc;
          for (int64_t kk = 0; kk < kc; ++kk) {
            const float wv = wr[kk];
            const float* cr = cols + kk * p;
            for (int64_t i = 0; i < p; ++i) yr[i] += wv * cr[i];
          }
          if (residual) {
            const float* rr = residual + (b * cout + co) * p;
            for (int64_t i = 0; i < p; ++i) yr[i] += rr[i];
          }
          apply_activation(a_.activation, yr, p);
        }
      }
    }
    return Status::Ok();
  }

 private:
  Status compute_channels_last(const KernelArgs& args) {
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const float* residual = args.num_src > 3 && args.src[3] ? args.src[3]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    const int64_t batch = x.shape[0], h = x.shape[1], wd = x.shape[2], cin = x.shape[3];
    const int64_t cout = w.shape[0], cin_g = w.shape[1], kh = w.shape[2], kw = w.shape[3];
    const int64_t ho = y.shape[1], wo = y.shape[2], cout_g = cout / a_.groups;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t oy = 0; oy < ho; ++oy)
        for (int64_t ox = 0; ox < wo; ++ox) {
          float* yp = y.f32() + ((b * ho + oy) * wo + ox) * cout;
          for (int64_t co = 0; co < cout; ++co) {
            const int64_t c0 = co / cout_g * cin_g;
            float acc = bias ? bias[co] : 0.0f;
            for (int64_t c = 0; c < cin_g; ++c)
              for (int64_t ky = 0; ky < kh; ++ky) {
                const int64_t iy = oy * a_.stride_h - a_.pad_h + ky * a_.dilation_h;
                if (iy < 0 || iy >= h) continue;
                for (int64_t kx = 0; kx < kw; ++kx) {
                  const int64_t ix = ox * a_.stride_w - a_.pad_w + kx * a_.dilation_w;
                  if (ix < 0 || ix >= wd) continue;
                  acc += w.f32()[((co * cin_g + c) * kh + ky) * kw + kx] *
                         x.f32()[((b * h + iy) * wd + ix) * cin + c0 + c];
                }
              }
            yp[co] = residual ? acc + residual[((b * ho + oy) * wo + ox) * cout + co] : acc;
          }
          apply_activation(a_.activation, yp, cout);
        }
    return Status::Ok();
  }

  void im2col(const float* x, int64_t cin_g, int64_t h, int64_t wd, int64_t kh, int64_t kw, int64_t ho,
              int64_t wo, float* col) const {
    for (int64_t c = 0; c < cin_g; ++c) {
      const float* xc = x + c * h * wd;
      for (int64_t ky = 0; ky < kh; ++ky) {
        for (int64_t kx = 0; kx < kw; ++kx) {
          float* row = col + ((c * kh + ky) * kw + kx) * ho * wo;
          for (int64_t oy = 0; oy < ho; ++oy) {
            float* out = row + oy * wo;
            const int64_t iy = oy * a_.stride_h - a_.pad_h + ky * a_.dilation_h;
            if (iy < 0 || iy >= h) {
              for (int64_t ox = 0; ox < wo; ++ox) out[ox] = 0.0f;
              continue;
            }
            const float* xr = xc + iy * wd;
            for (int64_t ox = 0; ox < wo; ++ox) {
              const int64_t ix = ox * a_.stride_w - a_.pad_w + kx * a_.dilation_w;
              out[ox] = (ix >= 0 && ix < wd) ? xr[ix] : 0.0f;
            }
          }
        }
      }
    }
  }

  Conv2dAttrs a_;
};

}  // namespace

Status create_conv2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  if (!activation_valid(a->activation))
    return bad_model("Conv2d '" + plan.node->name + "': unknown activation");
  const Shape& w = plan.src_shapes[1];
  const Shape& y = plan.dst_shapes[0];
  if (w.rank != 4 || y.rank != 4) return bad_model("Conv2d '" + plan.node->name + "': bad planned shapes");
  info->workspace_bytes = static_cast<size_t>(Conv2dKernel::col_floats(*a, w, y)) * sizeof(float);
  *kernel = std::make_unique<Conv2dKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
