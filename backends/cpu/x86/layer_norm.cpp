// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LayerNorm over the last axis: vectorised two-pass statistics per row, rows split over the threads.
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

class LayerNormKernel final : public ref::RefKernel {
 public:
  LayerNormKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, float eps)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        eps_(eps),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const float* gamma = args.num_src > 1 && args.src[1] ? args.src[1]->f32() : nullptr;
    const float* beta = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const int64_t c = x.shape.dim(-1);
    const int64_t rows = c > 0 ? x.numel() / c : 0;
    const float* px = x.f32();
    float* py = args.dst[0]->f32();
    const SimdTable* t = ctx_->simd;
    const float eps = eps_;
    const int nt = rows * c >= 8192 ? run_threads(args, planned_threads_) : 1;
    ThreadPool::parallel_for(rows, nt, [&](int64_t b, int64_t e, int) {
      t->layer_norm(px + b * c, py + b * c, e - b, c, gamma, beta, eps);
    });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  float eps_;
  int planned_threads_;
};

}  // namespace

Status create_layer_norm(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                         std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const LayerNormAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (!(a->eps >= 0.0f)) return Status::Ok();  // the reference reports it
  *kernel = std::make_unique<LayerNormKernel>(plan, ctx, a->eps);
  info->reentrant = true;  // compute keeps no state
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
