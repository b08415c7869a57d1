// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// TopK (core/ir/op_attrs.h, TopKAttrs), one line of the axis at a time: the line's indices fully sorted in
// TopKOrder (core/ops/top_k_order.h; equal values by the lower index, as ONNX asks), the first k written as
// values and as float32 indices. Outputs are always sorted (ONNX's sorted=0 leaves the order open).
#include <algorithm>
#include <numeric>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"
#include "ops/top_k_order.h"

namespace vitrt {
namespace ref {
namespace {

class TopKKernel final : public RefKernel {
 public:
  TopKKernel(const KernelPlan& plan, const TopKAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    int ax = 0;
    if (!normalize_axis(a_.axis, x.shape.rank, &ax)) return fail("axis out of range");
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; ++d) outer *= x.shape[d];
    for (int d = ax + 1; d < x.shape.rank; ++d) inner *= x.shape[d];
    const int64_t n = x.shape[ax], k = a_.k;
    if (k < 1 || k > n) return fail("k out of range");
    if (args.workspace_bytes < static_cast<size_t>(n) * sizeof(int32_t)) return fail("workspace too small");
    int32_t* order = static_cast<int32_t*>(args.workspace);
    const float* src = x.f32();
    float* values = args.dst[0]->f32();
    float* indices = args.dst[1]->f32();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const float* line = src + o * n * inner + i;
        std::iota(order, order + n, 0);
        std::sort(order, order + n, TopKOrder{line, inner, a_.largest});
        for (int64_t r = 0; r < k; ++r) {
          const int64_t e = (o * k + r) * inner + i;
          values[e] = line[order[r] * inner];
          indices[e] = static_cast<float>(order[r]);
        }
      }
    return Status::Ok();
  }

 private:
  TopKAttrs a_;
};

}  // namespace

Status create_top_k(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const TopKAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  int ax = 0;
  const Shape& s = plan.src_shapes[0];
  if (!normalize_axis(a->axis, s.rank, &ax)) return bad_model("TopK: axis out of range");
  info->workspace_bytes = static_cast<size_t>(s[ax]) * sizeof(int32_t);  // one line's order (<= 2^24)
  *kernel = std::make_unique<TopKKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
