// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// CumSum (core/ir/op_attrs.h, CumSumAttrs), one line of the axis at a time: a float32 running sum taken in
// the axis' order (from its end with reverse), written before (exclusive) or after adding each element. This
// is numpy.cumsum in float32, ONNX's reference: one rounding per step, in order.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class CumSumKernel final : public RefKernel {
 public:
  CumSumKernel(const KernelPlan& plan, const CumSumAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    int ax = 0;
    if (!normalize_axis(a_.axis, x.shape.rank, &ax)) return fail("axis out of range");
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; ++d) outer *= x.shape[d];
    for (int d = ax + 1; d < x.shape.rank; ++d) inner *= x.shape[d];
    const int64_t n = x.shape[ax];
    const float* src = x.f32();
    float* dst = args.dst[0]->f32();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        float sum = 0.0f;
        for (int64_t step = 0; step < n; ++step) {
          const int64_t k = a_.reverse ? n - 1 - step : step;
          const int64_t e = base + k * inner;
          if (a_.exclusive) {
            dst[e] = sum;
            sum += src[e];
          } else {
            sum += src[e];
            dst[e] = sum;
          }
        }
      }
    return Status::Ok();
  }

 private:
  CumSumAttrs a_;
};

}  // namespace

Status create_cum_sum(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const CumSumAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<CumSumKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
