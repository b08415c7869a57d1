// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Expand: src broadcast to dst's shape (core/ir/op_attrs.h, ExpandAttrs), a copy with stride 0 along every
// broadcast axis.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class ExpandKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    int64_t sx[kMaxRank], sy[kMaxRank];
    broadcast_strides(x.shape, y.shape, sx);
    contiguous_strides(y.shape, sy);
    strided_copy(y.shape.rank, y.shape.dims, x.f32(), sx, y.f32(), sy);
    return Status::Ok();
  }
};

}  // namespace

Status create_expand(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const ExpandAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<ExpandKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
