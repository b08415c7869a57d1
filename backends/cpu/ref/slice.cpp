// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Slice [start, end) of one axis, Python semantics: negative bounds count from the end, both are clamped.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class SliceKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const auto& a = std::get<SliceAttrs>(node_.attrs);
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    int axis;
    if (!normalize_axis(a.axis, x.shape.rank, &axis)) return fail("bad axis");
    const int64_t n = x.shape[axis];
    int64_t start = a.start < 0 ? a.start + n : a.start;
    start = start < 0 ? 0 : (start > n ? n : start);
    int64_t sx[kMaxRank], sy[kMaxRank];
    contiguous_strides(x.shape, sx);
    contiguous_strides(y.shape, sy);
    strided_copy(y.shape.rank, y.shape.dims, x.f32() + start * sx[axis], sx, y.f32(), sy);
    return Status::Ok();
  }
};

}  // namespace

Status create_slice(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SliceAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<SliceKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
