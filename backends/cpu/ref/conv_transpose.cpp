// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ConvTranspose in its direct scatter form (core/ir/op_attrs.h, ConvTransposeAttrs): the output starts as
// the bias, then every input element x[b, ci, iy, ix] adds x·W[ci, co_g, ky, kx] to output
// (b, g·Cout/groups + co_g, iy·stride_h − pad_top + ky·dilation_h, ix·stride_w − pad_left + kx·dilation_w)
// wherever that lies inside the output. Sums in float, input channel by input channel.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class ConvTransposeKernel final : public RefKernel {
 public:
  ConvTransposeKernel(const KernelPlan& plan, const ConvTransposeAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    const int64_t batch = x.shape[0], cin = x.shape[1], h = x.shape[2], wd = x.shape[3];
    const int64_t cout_g = w.shape[1], kh = w.shape[2], kw = w.shape[3];
    const int64_t cout = y.shape[1], ho = y.shape[2], wo = y.shape[3];
    const int64_t cin_g = cin / a_.groups;
    const float* px = x.f32();
    const float* pw = w.f32();
    float* py = y.f32();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t co = 0; co < cout; ++co) {
        float* plane = py + (b * cout + co) * ho * wo;
        const float v = bias ? bias[co] : 0.0f;
        for (int64_t i = 0; i < ho * wo; ++i) plane[i] = v;
      }
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t ci = 0; ci < cin; ++ci) {
        const int64_t g = ci / cin_g;
        for (int64_t iy = 0; iy < h; ++iy)
          for (int64_t ix = 0; ix < wd; ++ix) {
            const float v = px[((b * cin + ci) * h + iy) * wd + ix];
            for (int64_t cg = 0; cg < cout_g; ++cg) {
              float* plane = py + (b * cout + g * cout_g + cg) * ho * wo;
              const float* taps = pw + (ci * cout_g + cg) * kh * kw;
              for (int64_t ky = 0; ky < kh; ++ky) {
                const int64_t oy = iy * a_.stride_h - a_.pad_top + ky * a_.dilation_h;
                if (oy < 0 || oy >= ho) continue;
                for (int64_t kx = 0; kx < kw; ++kx) {
                  const int64_t ox = ix * a_.stride_w - a_.pad_left + kx * a_.dilation_w;
                  if (ox < 0 || ox >= wo) continue;
                  plane[oy * wo + ox] += v * taps[ky * kw + kx];
                }
              }
            }
          }
      }
    return Status::Ok();
  }

 private:
  ConvTransposeAttrs a_;
};

}  // namespace

Status create_conv_transpose(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const ConvTransposeAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<ConvTransposeKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
