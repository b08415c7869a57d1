// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Pool2d on x86: the output rows of every plane split over the threads, each row computed by the ISA's
// vectorised row kernel (pool2d_row_impl.h): a vector of output columns at a time in the row's interior, the
// reference kernel's per-cell loop at its edges.
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

class Pool2dKernel final : public ref::RefKernel {
 public:
  Pool2dKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const Pool2dAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    const int64_t planes = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t ho = y.shape[2], wo = y.shape[3], rows = planes * ho;
    // Threads pay off from about 64K taps.
    const int64_t taps = rows * wo * a_.kernel_h * a_.kernel_w;
    const int nt = taps >= 65536 ? run_threads(args, planned_threads_) : 1;
    const auto kernel_row = ctx_->simd->pool2d_row;
    const float* src = x.f32();
    float* dst = y.f32();
    ThreadPool::parallel_for(rows, nt, [&](int64_t lo, int64_t hi, int) {
      Pool2dRow r;
      r.h = h;
      r.w = w;
      r.kernel_h = a_.kernel_h;
      r.kernel_w = a_.kernel_w;
      r.stride_h = a_.stride_h;
      r.stride_w = a_.stride_w;
      r.dilation_h = a_.dilation_h;
      r.dilation_w = a_.dilation_w;
      r.pad_top = a_.pad_top;
      r.pad_left = a_.pad_left;
      r.pad_bottom = a_.pad_bottom;
      r.pad_right = a_.pad_right;
      r.is_max = a_.kind == PoolKind::kMax;
      r.count_include_pad = a_.count_include_pad;
      r.wo = wo;
      for (int64_t k = lo; k < hi; ++k) {
        const int64_t plane = k / ho;
        r.src = src + plane * h * w;
        r.oy = k % ho;
        r.dst = dst + k * wo;
        kernel_row(r);
      }
    });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  Pool2dAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_pool2d(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                     std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Pool2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  *kernel = std::make_unique<Pool2dKernel>(plan, ctx, *a);
  info->reentrant = true;  // compute keeps no state
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
