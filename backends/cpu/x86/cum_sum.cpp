// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// CumSum (core/ir/op_attrs.h, CumSumAttrs), threaded over the slices before the axis (and, when there are
// few, over blocks of the axes after it). Along an inner axis, a step adds a whole contiguous row of `inner`
// running sums at once, which the compiler vectorises; each sum still takes its elements one at a time in the
// axis' order, so the result is bit-identical to the reference (numpy.cumsum in float32).
#include <algorithm>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kBlock = 256;  // running sums per work item along an inner axis

// Lines [i0, i1) of slice `o`: the running sums of columns i0..i1 written row by row, reading the previous
// output row (or zero) for the sum so far.
void scan_block(const float* src, float* dst, int64_t n, int64_t inner, int64_t i0, int64_t i1,
                bool exclusive, bool reverse) {
  const int64_t w = i1 - i0;
  float sum[kBlock];
  std::fill(sum, sum + w, 0.0f);
  for (int64_t step = 0; step < n; ++step) {
    const int64_t k = reverse ? n - 1 - step : step;
    const float* s = src + k * inner + i0;
    float* d = dst + k * inner + i0;
    if (exclusive) {
      for (int64_t l = 0; l < w; ++l) {
        d[l] = sum[l];
        sum[l] += s[l];
      }
    } else {
      for (int64_t l = 0; l < w; ++l) {
        sum[l] += s[l];
        d[l] = sum[l];
      }
    }
  }
}

class CumSumKernel final : public ref::RefKernel {
 public:
  CumSumKernel(const KernelPlan& plan, const CumSumAttrs& a)
      : RefKernel(plan), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    int ax = 0;
    if (!normalize_axis(a_.axis, x.shape.rank, &ax)) return fail("axis out of range");
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; ++d) outer *= x.shape[d];
    for (int d = ax + 1; d < x.shape.rank; ++d) inner *= x.shape[d];
    const int64_t n = x.shape[ax], blocks = (inner + kBlock - 1) / kBlock, items = outer * blocks;
    const float* src = x.f32();
    float* dst = args.dst[0]->f32();
    const int threads = static_cast<int>(
        std::clamp<int64_t>(x.shape.numel() / (int64_t{1} << 16), 1, run_threads(args, planned_threads_)));
    const bool exclusive = a_.exclusive, reverse = a_.reverse;
    ThreadPool::parallel_for(items, threads, [&](int64_t lo, int64_t hi, int) {
      for (int64_t item = lo; item < hi; ++item) {
        const int64_t o = item / blocks, b = item % blocks;
        const int64_t i0 = b * kBlock, i1 = std::min(inner, i0 + kBlock);
        scan_block(src + o * n * inner, dst + o * n * inner, n, inner, i0, i1, exclusive, reverse);
      }
    });
    return Status::Ok();
  }

 private:
  CumSumAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_cum_sum(const std::shared_ptr<Context>&, const KernelPlan& plan,
                      std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const CumSumAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  *kernel = std::make_unique<CumSumKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
