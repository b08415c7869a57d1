// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Slice x[start:end:step] of one axis, Python semantics (core/ir/op_attrs.h, SliceAttrs): a strided copy that
// starts at the first kept element and walks the axis `step` elements at a time (backwards when negative).
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class SliceKernel final : public RefKernel {
 public:
  SliceKernel(const KernelPlan& plan, const SliceAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    int axis;
    int64_t first = 0, count = 0;
    // Shape inference has checked both already (RefKernel::run); kept as a guard.
    if (!normalize_axis(a_.axis, x.shape.rank, &axis) || !slice_range(x.shape[axis], a_, &first, &count))
      return fail("bad axis or empty range");
    int64_t sx[kMaxRank], sy[kMaxRank];
    contiguous_strides(x.shape, sx);
    contiguous_strides(y.shape, sy);
    const float* src = x.f32() + first * sx[axis];
    // With count > 1, (count - 1)·|step| < n, so sx·step stays inside the tensor; a lone element takes no
    // step (a |step| beyond the axis, from a file, could overflow the product).
    sx[axis] = count > 1 ? sx[axis] * a_.step : 0;
    strided_copy(y.shape.rank, y.shape.dims, src, sx, y.f32(), sy);
    return Status::Ok();
  }

 private:
  SliceAttrs a_;
};

}  // namespace

Status create_slice(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const SliceAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<SliceKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
