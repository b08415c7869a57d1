// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Transpose: dst dim i = src dim perm[i].
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class TransposeKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const auto& perm = std::get<TransposeAttrs>(node_.attrs).perm;
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    int64_t sx[kMaxRank], sy[kMaxRank], sxp[kMaxRank];
    contiguous_strides(x.shape, sx);
    contiguous_strides(y.shape, sy);
    for (int i = 0; i < y.shape.rank; ++i) sxp[i] = sx[perm[i]];
    strided_copy(y.shape.rank, y.shape.dims, x.f32(), sxp, y.f32(), sy);
    return Status::Ok();
  }
};

}  // namespace

Status create_transpose(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const TransposeAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<TransposeKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
