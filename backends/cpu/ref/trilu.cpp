// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Trilu (core/ir/op_attrs.h, TriluAttrs), one element at a time: element (i, j) of each matrix of the last
// two axes is copied when j − i >= k (upper) or j − i <= k (lower), else written as zero.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class TriluKernel final : public RefKernel {
 public:
  TriluKernel(const KernelPlan& plan, const TriluAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const int r = x.shape.rank;
    if (r < 2) return fail("input of rank below 2");
    const int64_t rows = x.shape[r - 2], cols = x.shape[r - 1];
    const int64_t matrices = x.shape.numel() / (rows * cols > 0 ? rows * cols : 1);
    const float* src = x.f32();
    float* dst = args.dst[0]->f32();
    for (int64_t m = 0; m < matrices; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t e = (m * rows + i) * cols + j;
          const bool keep = a_.upper ? j - i >= a_.k : j - i <= a_.k;
          dst[e] = keep ? src[e] : 0.0f;
        }
    return Status::Ok();
  }

 private:
  TriluAttrs a_;
};

}  // namespace

Status create_trilu(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const TriluAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<TriluKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
