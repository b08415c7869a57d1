// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Trilu (core/ir/op_attrs.h, TriluAttrs), threaded over the rows of all matrices. Each row is one copied span
// and one zeroed span: upper keeps columns j >= i + k, lower keeps j <= i + k (clamped to the row).
#include <algorithm>
#include <cstring>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

class TriluKernel final : public ref::RefKernel {
 public:
  TriluKernel(const KernelPlan& plan, const TriluAttrs& a)
      : RefKernel(plan), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const int r = x.shape.rank;
    if (r < 2) return fail("input of rank below 2");
    const int64_t rows = x.shape[r - 2], cols = x.shape[r - 1];
    if (rows < 1 || cols < 1) return Status::Ok();
    const int64_t all_rows = x.shape.numel() / cols;
    const float* src = x.f32();
    float* dst = args.dst[0]->f32();
    const int threads = static_cast<int>(
        std::clamp<int64_t>(x.shape.numel() / (int64_t{1} << 16), 1, run_threads(args, planned_threads_)));
    const TriluAttrs a = a_;
    ThreadPool::parallel_for(all_rows, threads, [&](int64_t lo, int64_t hi, int) {
      for (int64_t row = lo; row < hi; ++row) {
        const int64_t i = row % rows;
        // The diagonal column of this row, i + k, clamped to [-1, cols] (k may be any int64).
        const int64_t diag = a.k > cols        ? cols
                             : a.k < -rows - 1 ? -1
                                               : std::clamp<int64_t>(i + a.k, -1, cols);
        // upper: [0, diag) zero, [diag, cols) kept; lower: [0, diag] kept, (diag, cols) zero.
        const int64_t split = a.upper ? std::max<int64_t>(diag, 0) : std::min<int64_t>(diag + 1, cols);
        const float* s = src + row * cols;
        float* d = dst + row * cols;
        if (a.upper) {
          std::fill(d, d + split, 0.0f);
          std::memcpy(d + split, s + split, static_cast<size_t>(cols - split) * sizeof(float));
        } else {
          std::memcpy(d, s, static_cast<size_t>(split) * sizeof(float));
          std::fill(d + split, d + cols, 0.0f);
        }
      }
    });
    return Status::Ok();
  }

 private:
  TriluAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_trilu(const std::shared_ptr<Context>&, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                    KernelInfo*) {
  const TriluAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  *kernel = std::make_unique<TriluKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
