// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Reshape: the same elements in the same order under a new shape (a copy; the planner may alias instead).
#include <cstring>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class ReshapeKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    if (x.numel() != y.numel()) return fail("element counts differ");
    if (x.data != y.data) std::memmove(y.data, x.data, static_cast<size_t>(x.numel()) * sizeof(float));
    return Status::Ok();
  }
};

}  // namespace

Status create_reshape(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const ReshapeAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<ReshapeKernel>(plan);
  info->may_inplace = true;  // then the planner gives dst src's bytes and the copy disappears
  info->is_view = true;      // even when src has other readers: nothing is written
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
