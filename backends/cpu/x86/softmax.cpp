// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Softmax along one axis, vectorised (simd_impl.h softmax_rows / softmax_columns, the exp of the flash
// attention). The last axis: rows split over the threads (Swin's window attention has ~10^5 rows of
// 49). Another axis: (outer slice, block of 64 columns after the axis) split over the threads, W columns a
// vector.
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kColumnBlock = 64;
constexpr int64_t kThreadedElements = 8192;  // below this one thread is faster than waking a second

class SoftmaxKernel final : public ref::RefKernel {
 public:
  SoftmaxKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, int32_t axis)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        axis_(axis),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    int axis;
    if (!normalize_axis(axis_, x.shape.rank, &axis)) return fail("bad axis");
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= x.shape[i];
    for (int i = axis + 1; i < x.shape.rank; ++i) inner *= x.shape[i];
    const int64_t n = x.shape[axis];
    if (n == 0 || outer == 0 || inner == 0) return Status::Ok();
    const float* px = x.f32();
    float* py = args.dst[0]->f32();
    const SimdTable* t = ctx_->simd;
    const int nt = x.numel() >= kThreadedElements ? run_threads(args, planned_threads_) : 1;
    if (inner == 1) {
      ThreadPool::parallel_for(
          outer, nt, [&](int64_t b, int64_t e, int) { t->softmax_rows(px + b * n, py + b * n, e - b, n); });
      return Status::Ok();
    }
    const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
    ThreadPool::parallel_for(outer * blocks, nt, [&](int64_t b, int64_t e, int) {
      for (int64_t it = b; it < e; ++it) {
        const int64_t o = it / blocks, c0 = it % blocks * kColumnBlock;
        const int64_t c1 = c0 + kColumnBlock < inner ? c0 + kColumnBlock : inner;
        t->softmax_columns(px + o * n * inner, py + o * n * inner, n, inner, c0, c1);
      }
    });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  int32_t axis_;
  int planned_threads_;
};

}  // namespace

Status create_softmax(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                      std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SoftmaxAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  *kernel = std::make_unique<SoftmaxKernel>(plan, ctx, a->axis);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
