// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Pool2d (core/ir/op_attrs.h, Pool2dAttrs) as PyTorch's max_pool2d / avg_pool2d and ONNX's MaxPool /
// AveragePool, with asymmetric padding. Per output cell, the window's taps that fall inside the input are
// visited; padding and the ceil_mode overhang are never read. Max: the largest tap, a NaN wins (as PyTorch);
// average: the sum in double over the divisor of Pool2dAttrs.
#include <cmath>
#include <limits>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

// One axis of the windows: output index o covers positions o·stride − pad_begin + k·dilation, k < kernel.
struct PoolAxis {
  int64_t in, kernel, stride, dilation, pad_begin, pad_end;

  int64_t start(int64_t o) const { return o * stride - pad_begin; }
  // The first and one past the last tap index k whose position lies inside [0, in).
  int64_t first_tap(int64_t o) const {
    const int64_t s = start(o);
    return s >= 0 ? 0 : (-s + dilation - 1) / dilation;
  }
  int64_t end_tap(int64_t o) const {
    const int64_t s = start(o);
    if (s >= in) return 0;
    const int64_t last = (in - 1 - s) / dilation + 1;
    return last < kernel ? last : kernel;
  }
  // Average with count_include_pad (no dilation): the window clipped to the padded input [−pad_begin,
  // in + pad_end), so the ceil_mode overhang is not counted (PyTorch's avg_pool2d).
  int64_t padded_count(int64_t o) const {
    const int64_t s = start(o), e = s + kernel, limit = in + pad_end;
    return (e < limit ? e : limit) - s;
  }
};

class Pool2dKernel final : public RefKernel {
 public:
  Pool2dKernel(const KernelPlan& plan, const Pool2dAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    const int64_t planes = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t ho = y.shape[2], wo = y.shape[3];
    const PoolAxis rows{h, a_.kernel_h, a_.stride_h, a_.dilation_h, a_.pad_top, a_.pad_bottom};
    const PoolAxis cols{w, a_.kernel_w, a_.stride_w, a_.dilation_w, a_.pad_left, a_.pad_right};
    const bool is_max = a_.kind == PoolKind::kMax;
    for (int64_t p = 0; p < planes; ++p) {
      const float* src = x.f32() + p * h * w;
      float* dst = y.f32() + p * ho * wo;
      for (int64_t i = 0; i < ho; ++i) {
        const int64_t r0 = rows.first_tap(i), r1 = rows.end_tap(i), rs = rows.start(i);
        for (int64_t j = 0; j < wo; ++j) {
          const int64_t c0 = cols.first_tap(j), c1 = cols.end_tap(j), cs = cols.start(j);
          if (is_max) {
            float m = -std::numeric_limits<float>::infinity();
            for (int64_t kr = r0; kr < r1; ++kr) {
              const float* row = src + (rs + kr * a_.dilation_h) * w + cs;
              for (int64_t kc = c0; kc < c1; ++kc) {
                const float v = row[kc * a_.dilation_w];
                if (v > m || std::isnan(v)) m = v;  // once NaN, m stays NaN
              }
            }
            dst[i * wo + j] = m;
          } else {
            double sum = 0;
            for (int64_t kr = r0; kr < r1; ++kr)
              for (int64_t kc = c0; kc < c1; ++kc) sum += src[(rs + kr) * w + cs + kc];
            // Shape inference guarantees at least one tap inside the input (pads < kernel, no dilation).
            const int64_t count =
                a_.count_include_pad ? rows.padded_count(i) * cols.padded_count(j) : (r1 - r0) * (c1 - c0);
            dst[i * wo + j] = static_cast<float>(sum / static_cast<double>(count));
          }
        }
      }
    }
    return Status::Ok();
  }

 private:
  Pool2dAttrs a_;
};

}  // namespace

Status create_pool2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const Pool2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<Pool2dKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
