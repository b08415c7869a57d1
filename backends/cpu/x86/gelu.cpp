// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Gelu (erf or tanh form), vectorised (xsimd erf/tanh), split over the threads. May run in place.
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

class GeluKernel final : public ref::RefKernel {
 public:
  GeluKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, bool tanh_form)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        tanh_(tanh_form),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const float* px = args.src[0]->f32();
    float* py = args.dst[0]->f32();
    const int64_t n = args.src[0]->numel();
    constexpr int64_t kChunk = 4096;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    const SimdTable* t = ctx_->simd;
    const bool th = tanh_;
    ThreadPool::parallel_for(chunks, run_threads(args, planned_threads_), [&](int64_t b, int64_t e, int) {
      const int64_t lo = b * kChunk, hi = e * kChunk < n ? e * kChunk : n;
      t->gelu(px + lo, py + lo, hi - lo, th);
    });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  bool tanh_;
  int planned_threads_;
};

}  // namespace

Status create_gelu(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                   std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const GeluAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (a->approximation != GeluApproximation::kErf && a->approximation != GeluApproximation::kTanh)
    return Status::Ok();  // the reference reports it
  *kernel = std::make_unique<GeluKernel>(plan, ctx, a->approximation == GeluApproximation::kTanh);
  info->may_inplace = true;
  info->reentrant = true;  // compute keeps no state
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
