// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// TopK (core/ir/op_attrs.h, TopKAttrs), threaded over the lines of the axis: each thread orders a line's
// indices in its own workspace slice with a partial sort (only the first k placed) in TopKOrder
// (core/ops/top_k_order.h), a strict total order, so the k chosen and their order are the reference's.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"
#include "ops/op_registry.h"
#include "ops/top_k_order.h"

namespace vitrt {
namespace x86 {
namespace {

class TopKKernel final : public ref::RefKernel {
 public:
  TopKKernel(const KernelPlan& plan, const TopKAttrs& a, int64_t line)
      : RefKernel(plan), a_(a), line_(line), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  size_t workspace_bytes() const { return static_cast<size_t>(planned_threads_ * line_) * sizeof(int32_t); }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    int ax = 0;
    if (!normalize_axis(a_.axis, x.shape.rank, &ax)) return fail("axis out of range");
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; ++d) outer *= x.shape[d];
    for (int d = ax + 1; d < x.shape.rank; ++d) inner *= x.shape[d];
    const int64_t n = x.shape[ax], k = a_.k;
    if (k < 1 || k > n || n > line_) return fail("k or the axis out of the planned range");
    if (args.workspace_bytes < workspace_bytes()) return fail("workspace smaller than planned");
    int32_t* slots = static_cast<int32_t*>(args.workspace);
    const float* src = x.f32();
    float* values = args.dst[0]->f32();
    float* indices = args.dst[1]->f32();
    const int64_t lines = outer * inner;
    const int threads = static_cast<int>(
        std::clamp<int64_t>(lines * n / (int64_t{1} << 14), 1, run_threads(args, planned_threads_)));
    const bool largest = a_.largest;
    const int64_t line_slots = line_;
    ThreadPool::parallel_for(lines, threads, [&](int64_t lo, int64_t hi, int t) {
      int32_t* order = slots + t * line_slots;
      for (int64_t l = lo; l < hi; ++l) {
        const int64_t o = l / inner, i = l % inner;
        const float* line = src + o * n * inner + i;
        std::iota(order, order + n, 0);
        std::partial_sort(order, order + k, order + n, TopKOrder{line, inner, largest});
        for (int64_t r = 0; r < k; ++r) {
          const int64_t e = (o * k + r) * inner + i;
          values[e] = line[order[r] * inner];
          indices[e] = static_cast<float>(order[r]);
        }
      }
    });
    return Status::Ok();
  }

 private:
  TopKAttrs a_;
  int64_t line_;
  int planned_threads_;
};

}  // namespace

Status create_top_k(const std::shared_ptr<Context>&, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                    KernelInfo* info) {
  const TopKAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  int ax = 0;
  const Shape& s = plan.src_shapes[0];
  if (!normalize_axis(a->axis, s.rank, &ax)) return bad_model("TopK: axis out of range");
  auto k = std::make_unique<TopKKernel>(plan, *a, s[ax]);
  info->workspace_bytes = k->workspace_bytes();
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
