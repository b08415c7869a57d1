// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// GatherElements (core/ir/op_attrs.h, GatherElementsAttrs), threaded over the rows of the output (its last
// axis). Each row's source offset, all coordinates but the gathered one, is computed once; along the row the
// index is read from the indices and checked as the reference checks it.
#include <algorithm>
#include <atomic>
#include <string>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace x86 {
namespace {

class GatherElementsKernel final : public ref::RefKernel {
 public:
  GatherElementsKernel(const KernelPlan& plan, const GatherElementsAttrs& a)
      : RefKernel(plan), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef &x = *args.src[0], &ix = *args.src[1];
    const int r = x.shape.rank;
    int ax = 0;
    if (!normalize_axis(a_.axis, r, &ax) || ix.shape.rank != r) return fail("axis or rank out of range");
    int64_t stride[kMaxRank];
    int64_t s = 1;
    for (int d = r - 1; d >= 0; --d) {
      stride[d] = s;
      s *= x.shape[d];
    }
    const int64_t cols = ix.shape[r - 1], rows = ix.shape.numel() / cols, len = x.shape[ax];
    const float flen = static_cast<float>(len);
    const float* src = x.f32();
    const float* idx = ix.f32();
    float* dst = args.dst[0]->f32();
    const int threads = static_cast<int>(
        std::clamp<int64_t>(ix.shape.numel() / (int64_t{1} << 15), 1, run_threads(args, planned_threads_)));
    std::atomic<bool> bad{false};
    const Shape ishape = ix.shape;
    ThreadPool::parallel_for(rows, threads, [&](int64_t lo, int64_t hi, int) {
      for (int64_t row = lo; row < hi; ++row) {
        // The row's coordinates on axes 0..r-2, and its source offset without the gathered axis.
        int64_t base = 0, rest = row;
        for (int d = r - 2; d >= 0; --d) {
          const int64_t c = rest % ishape[d];
          rest /= ishape[d];
          if (d != ax) base += c * stride[d];
        }
        const float* in = idx + row * cols;
        float* out = dst + row * cols;
        for (int64_t j = 0; j < cols; ++j) {
          const float v = in[j];
          if (!(v >= 0.0f && v < flen) || v != static_cast<float>(static_cast<int64_t>(v))) {
            bad.store(true, std::memory_order_relaxed);
            return;
          }
          const int64_t k = static_cast<int64_t>(v);
          out[j] = ax == r - 1 ? src[base + k] : src[base + k * stride[ax] + j];
        }
      }
    });
    if (bad.load()) return fail("an index is not an integer in [0, " + std::to_string(len) + ")");
    return Status::Ok();
  }

 private:
  GatherElementsAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_gather_elements(const std::shared_ptr<Context>&, const KernelPlan& plan,
                              std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const GatherElementsAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  *kernel = std::make_unique<GatherElementsKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
