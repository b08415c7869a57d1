// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ArgMax / ArgMin along one axis (core/ir/op_attrs.h, ArgMaxAttrs), one output element at a time: the first
// best element wins (the last with select_last_index), and a NaN beats every number, as numpy.argmax /
// argmin do. The index is written as a float32 value (exact: the axis has at most 2^24 elements).
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class ArgMaxKernel final : public RefKernel {
 public:
  ArgMaxKernel(const KernelPlan& plan, const ArgMaxAttrs& a) : RefKernel(plan), a_(a) {}

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
        const float* line = src + o * n * inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < n; ++k)
          if (better(line[k * inner], line[best * inner])) best = k;
        dst[o * inner + i] = static_cast<float>(best);
      }
    return Status::Ok();
  }

 private:
  // Whether v (at a later index) replaces the best so far.
  bool better(float v, float best) const {
    if (std::isnan(best)) return a_.select_last_index && std::isnan(v);  // only a later NaN, and only last
    if (std::isnan(v)) return true;
    if (a_.select_last_index) return a_.kind == ArgKind::kMax ? v >= best : v <= best;
    return a_.kind == ArgKind::kMax ? v > best : v < best;
  }

  ArgMaxAttrs a_;
};

}  // namespace

Status create_arg_max(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const ArgMaxAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<ArgMaxKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
