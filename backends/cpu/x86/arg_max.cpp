// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ArgMax / ArgMin (core/ir/op_attrs.h, ArgMaxAttrs) with the reference's rule (first best wins, the last
// with select_last_index; a NaN beats every number), threaded over the output. Along the last axis each
// output is one scan of a contiguous row. Along an inner axis, a block of up to kLanes neighbouring outputs
// is scanned together: each step of the axis reads kLanes contiguous floats and updates kLanes
// (best, index) pairs with branch-free selects, which the compiler vectorises.
#include <algorithm>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kLanes = 64;

// Whether v, at a later index, replaces `best`: the reference's rule written without branches. NaN != NaN.
template <bool kMax, bool kLast>
inline bool takes(float v, float best) {
  const bool v_nan = v != v, best_nan = best != best;
  const bool wins = kMax ? (kLast ? v >= best : v > best) : (kLast ? v <= best : v < best);
  // A number never replaces a NaN; a NaN replaces a number, and with kLast a NaN too.
  return kLast ? (wins || v_nan) : (wins || (v_nan && !best_nan));
}

template <bool kMax, bool kLast>
void arg_rows(const float* src, int64_t n, int64_t inner, int64_t outer_lo, int64_t outer_hi,
              int64_t block_lo, int64_t block_hi, float* dst) {
  // Work items are (outer, block of lanes) pairs, numbered outer·blocks + block.
  const int64_t blocks = (inner + kLanes - 1) / kLanes;
  for (int64_t o = outer_lo; o < outer_hi; ++o) {
    const int64_t b0 = o == outer_lo ? block_lo : 0, b1 = o + 1 == outer_hi ? block_hi : blocks;
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t i0 = blk * kLanes, lanes = std::min(kLanes, inner - i0);
      const float* base = src + o * n * inner + i0;
      float* out = dst + o * inner + i0;
      if (inner == 1) {
        float best = base[0];
        int64_t at = 0;
        for (int64_t k = 1; k < n; ++k)
          if (takes<kMax, kLast>(base[k], best)) {
            best = base[k];
            at = k;
          }
        out[0] = static_cast<float>(at);
        continue;
      }
      float best[kLanes];
      float at[kLanes];  // indices < 2^24: exact as floats
      for (int64_t l = 0; l < lanes; ++l) {
        best[l] = base[l];
        at[l] = 0.0f;
      }
      for (int64_t k = 1; k < n; ++k) {
        const float* row = base + k * inner;
        const float kf = static_cast<float>(k);
        for (int64_t l = 0; l < lanes; ++l) {
          const bool t = takes<kMax, kLast>(row[l], best[l]);
          best[l] = t ? row[l] : best[l];
          at[l] = t ? kf : at[l];
        }
      }
      std::copy(at, at + lanes, out);
    }
  }
}

class ArgMaxKernel final : public ref::RefKernel {
 public:
  ArgMaxKernel(const KernelPlan& plan, const ArgMaxAttrs& a)
      : RefKernel(plan), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    int ax = 0;
    if (!normalize_axis(a_.axis, x.shape.rank, &ax)) return fail("axis out of range");
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; ++d) outer *= x.shape[d];
    for (int d = ax + 1; d < x.shape.rank; ++d) inner *= x.shape[d];
    const int64_t n = x.shape[ax], blocks = (inner + kLanes - 1) / kLanes;
    const float* src = x.f32();
    float* dst = args.dst[0]->f32();
    const int64_t items = outer * blocks;
    // Threads only where there is enough work to pay for waking them (about 64K elements each).
    const int64_t work = items * std::min(inner, kLanes) * n;
    const int threads = static_cast<int>(
        std::clamp<int64_t>(work / (int64_t{1} << 16), 1, run_threads(args, planned_threads_)));
    auto scan = arg_rows<true, false>;
    if (a_.kind == ArgKind::kMax)
      scan = a_.select_last_index ? arg_rows<true, true> : arg_rows<true, false>;
    else
      scan = a_.select_last_index ? arg_rows<false, true> : arg_rows<false, false>;
    ThreadPool::parallel_for(items, threads, [&](int64_t lo, int64_t hi, int) {
      const int64_t o_lo = lo / blocks, o_hi = (hi - 1) / blocks + 1;
      scan(src, n, inner, o_lo, o_hi, lo % blocks, (hi - 1) % blocks + 1, dst);
    });
    return Status::Ok();
  }

 private:
  ArgMaxAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_arg_max(const std::shared_ptr<Context>&, const KernelPlan& plan,
                      std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const ArgMaxAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  *kernel = std::make_unique<ArgMaxKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
