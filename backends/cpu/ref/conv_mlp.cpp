// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ConvMlp (the planner's fused PVT v2 / LaViT MLP), one image at a time, with exactly the arithmetic of the
// three reference kernels it replaces (linear_rows.h, conv2d.cpp's channels-last path, linear_rows.h again),
// so the fused graph gives the unfused graph's bits on this backend:
//   hidden[p, :] = act1(b1 + Σ_k src[p, k]·W1ᵀ[k, :])                       (i-k-j over W1ᵀ, as Linear)
//   mid[p, c]    = act2(bdw[c] + Σ_{ky,kx} dw[c, ky, kx]·hidden[p + (ky-pad_h, kx-pad_w), c])
//   dst[p, :]    = act3(b2 + Σ_k mid[p, k]·W2ᵀ[k, :]) + residual[p, :]
// Workspace: W1ᵀ and W2ᵀ (made on each run: the weights may be computed), hidden and mid for one image.
#include <algorithm>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/linear_rows.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class ConvMlpKernel final : public RefKernel {
 public:
  ConvMlpKernel(const KernelPlan& plan, const ConvMlpAttrs& a) : RefKernel(plan), a_(a) {}

  static int64_t workspace_floats(int64_t n, int64_t c, int64_t ch, int64_t co) {
    return ch * c + co * ch + 2 * n * ch;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    auto in = [&](int i) { return i < args.num_src && args.src[i] ? args.src[i]->f32() : nullptr; };
    const TensorRef& x = *args.src[0];
    const int64_t batch = x.shape[0], n = x.shape[1], c = x.shape[2];
    const int64_t ch = args.src[1]->shape[0], co = args.src[5]->shape[0];
    const int64_t h = a_.height, w = a_.width, kh = 2 * a_.pad_h + 1, kw = 2 * a_.pad_w + 1;
    VITRT_RETURN_IF_ERROR(check_workspace(args, workspace_floats(n, c, ch, co)));
    float* w1t = static_cast<float*>(args.workspace);
    float* w2t = w1t + ch * c;
    float* hidden = w2t + co * ch;
    float* mid = hidden + n * ch;
    transpose_weight(in(1), ch, c, w1t);
    transpose_weight(in(5), co, ch, w2t);
    const float* dw = in(3);
    const float* dw_b = in(4);
    const float* residual = in(7);
    for (int64_t b = 0; b < batch; ++b) {
      linear_rows(x.f32() + b * n * c, n, c, w1t, ch, in(2), a_.fc1_activation, nullptr, hidden);
      for (int64_t oy = 0; oy < h; ++oy)
        for (int64_t ox = 0; ox < w; ++ox) {
          float* mp = mid + (oy * w + ox) * ch;
          for (int64_t cc = 0; cc < ch; ++cc) {
            float acc = dw_b ? dw_b[cc] : 0.0f;
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t iy = oy - a_.pad_h + ky;
              if (iy < 0 || iy >= h) continue;
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t ix = ox - a_.pad_w + kx;
                if (ix < 0 || ix >= w) continue;
                acc += dw[(cc * kh + ky) * kw + kx] * hidden[(iy * w + ix) * ch + cc];
              }
            }
            mp[cc] = acc;
          }
          apply_activation(a_.dw_activation, mp, ch);
        }
      linear_rows(mid, n, ch, w2t, co, in(6), a_.fc2_activation, residual ? residual + b * n * co : nullptr,
                  args.dst[0]->f32() + b * n * co);
    }
    return Status::Ok();
  }

 private:
  ConvMlpAttrs a_;
};

}  // namespace

Status create_conv_mlp(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const ConvMlpAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  if (!activation_valid(a->fc1_activation) || !activation_valid(a->dw_activation) ||
      !activation_valid(a->fc2_activation))
    return bad_model("ConvMlp '" + plan.node->name + "': unknown activation");
  const Shape& xs = plan.src_shapes[0];
  const Shape& w1 = plan.src_shapes[1];
  const Shape& w2 = plan.src_shapes[5];
  if (xs.rank != 3 || w1.rank != 2 || w2.rank != 2)
    return bad_model("ConvMlp '" + plan.node->name + "': src must be [B,N,C] and the weights [out,in]");
  info->workspace_bytes =
      static_cast<size_t>(ConvMlpKernel::workspace_floats(xs[1], xs[2], w1[0], w2[0])) * sizeof(float);
  *kernel = std::make_unique<ConvMlpKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
