// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Concat along one axis; every other axis broadcasts (a [1,1,C] token joins a [B,N,C] batch).
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class ConcatKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    TensorRef& y = *args.dst[0];
    const int rank = y.shape.rank;
    int axis;
    if (!normalize_axis(std::get<ConcatAttrs>(node_.attrs).axis, rank, &axis)) return fail("bad axis");
    int64_t sy[kMaxRank];
    contiguous_strides(y.shape, sy);
    int64_t offset = 0;  // along `axis`
    for (int i = 0; i < args.num_src; ++i) {
      const TensorRef& x = *args.src[i];
      Shape part = y.shape;  // the region of y this input fills
      part[axis] = x.shape[axis];
      int64_t sx[kMaxRank];
      broadcast_strides(x.shape, part, sx);
      strided_copy(rank, part.dims, x.f32(), sx, y.f32() + offset * sy[axis], sy);
      offset += x.shape[axis];
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_concat(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const ConcatAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<ConcatKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
