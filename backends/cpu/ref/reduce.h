// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Reductions over a set of axes: the ops ReduceMean, ReduceSum, ReduceMax (ReduceMeanAttrs) and Reduce
// (ReduceAttrs, one kernel per ReduceKind); keepdims only changes the shape, not the layout. Sums and
// products accumulate in double; min and max propagate NaN as torch.amin/amax do; log-sum-exp subtracts the
// maximum first (core/ir/op_attrs.h gives each reduction's value over an empty set).
#include <cmath>
#include <vector>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {

enum class Reduction { kMean, kSum, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// The reduced axes of a reduction node (either attribute kind).
inline const std::vector<int32_t>& reduced_axes(const Node& node) {
  if (const auto* r = std::get_if<ReduceAttrs>(&node.attrs)) return r->axes;
  return std::get<ReduceMeanAttrs>(node.attrs).axes;
}

template <Reduction R>
class ReduceKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    float* py = args.dst[0]->f32();
    const float* px = x.f32();
    bool reduced[kMaxRank] = {};
    for (int32_t ax : reduced_axes(node_)) {
      int n;
      if (!normalize_axis(ax, x.shape.rank, &n)) return fail("bad axis");
      reduced[n] = true;
    }
    int64_t sx[kMaxRank];
    contiguous_strides(x.shape, sx);
    // Kept axes (in order) index the contiguous output; reduced axes are combined for each output element.
    int64_t kdims[kMaxRank], ks_x[kMaxRank], ks_y[kMaxRank], rdims[kMaxRank], rs_x[kMaxRank];
    int nk = 0, nr = 0;
    int64_t count = 1;
    for (int i = 0; i < x.shape.rank; ++i) {
      if (reduced[i]) {
        rdims[nr] = x.shape[i];
        rs_x[nr++] = sx[i];
        count *= x.shape[i];
      } else {
        kdims[nk] = x.shape[i];
        ks_x[nk++] = sx[i];
      }
    }
    int64_t st = 1;
    for (int i = nk - 1; i >= 0; --i) {
      ks_y[i] = st;
      st *= kdims[i];
    }
    LoopNest outer, inner;
    const int64_t* ost[2] = {ks_y, ks_x};
    outer.init(nk, kdims, 2, ost);
    const int64_t* ist[1] = {rs_x};
    inner.init(nr, rdims, 1, ist);
    // The mean divides the sum by the count, as AdaptiveAvgPool2d does, so that a mean over H and W gives
    // the same bits either way (the fused SqueezeExcite reproduces both; squeeze_excite_gate.h).
    const double count_d = static_cast<double>(count);
    outer.for_each_row([&](const int64_t* off, int64_t n, const int64_t* step) {
      for (int64_t e = 0; e < n; ++e) {
        const float* base = px + off[1] + e * step[1];
        // Calls fn(v) for every value reduced into this output element.
        auto each = [&](auto&& fn) {
          inner.for_each_row([&](const int64_t* roff, int64_t m, const int64_t* rstep) {
            const float* p = base + roff[0];
            for (int64_t j = 0; j < m; ++j) fn(p[j * rstep[0]]);
          });
        };
        py[off[0] + e * step[0]] = reduce_one(each, count_d);
      }
    });
    return Status::Ok();
  }

 private:
  // A NaN wins; otherwise the larger (max) or smaller (min) value.
  static float pick(float v, float m) {
    if (std::isnan(m)) return m;
    if (std::isnan(v)) return v;
    return R == Reduction::kMin ? (v < m ? v : m) : (v > m ? v : m);
  }

  template <class Each>
  static float reduce_one(Each& each, double count) {
    if constexpr (R == Reduction::kMax || R == Reduction::kMin) {
      float m = R == Reduction::kMax ? -INFINITY : INFINITY;
      each([&](float v) { m = pick(v, m); });
      return m;
    } else if constexpr (R == Reduction::kLogSumExp) {
      float mx = -INFINITY;
      each([&](float v) { mx = std::isnan(mx) || std::isnan(v) ? NAN : (v > mx ? v : mx); });
      if (!std::isfinite(mx)) return mx;  // NaN, +inf, or -inf (all -inf, or an empty set)
      double sum = 0.0;
      each([&](float v) { sum += std::exp(static_cast<double>(v) - mx); });
      return static_cast<float>(mx + std::log(sum));
    } else {
      double acc = R == Reduction::kProd ? 1.0 : 0.0;
      each([&](float v) {
        const double d = v;
        if constexpr (R == Reduction::kProd)
          acc *= d;
        else if constexpr (R == Reduction::kL1)
          acc += std::fabs(d);
        else if constexpr (R == Reduction::kL2 || R == Reduction::kSumSquare)
          acc += d * d;
        else
          acc += d;  // mean, sum, log-sum
      });
      if constexpr (R == Reduction::kMean)
        return static_cast<float>(count > 0 ? acc / count : 0.0);
      else if constexpr (R == Reduction::kL2)
        return static_cast<float>(std::sqrt(acc));
      else if constexpr (R == Reduction::kLogSum)
        return static_cast<float>(std::log(acc));
      else
        return static_cast<float>(acc);
    }
  }
};

template <Reduction R, class Attrs = ReduceMeanAttrs>
Status create_reduce_kernel(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel) {
  const Attrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<ReduceKernel<R>>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
