// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Reductions over a set of axes (ReduceMean, ReduceSum, ReduceMax); keepdims only changes the shape, not the
// layout. Sums accumulate in double; max propagates NaN as torch.amax does.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {

enum class Reduction { kMean, kSum, kMax };

template <Reduction R>
class ReduceKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const auto& a = std::get<ReduceMeanAttrs>(node_.attrs);
    const TensorRef& x = *args.src[0];
    float* py = args.dst[0]->f32();
    const float* px = x.f32();
    bool reduced[kMaxRank] = {};
    for (int32_t ax : a.axes) {
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
    const double inv = count > 0 ? 1.0 / static_cast<double>(count) : 0.0;
    outer.for_each_row([&](const int64_t* off, int64_t n, const int64_t* step) {
      for (int64_t e = 0; e < n; ++e) {
        const float* base = px + off[1] + e * step[1];
        double sum = 0.0;
        float mx = -INFINITY;
        inner.for_each_row([&](const int64_t* roff, int64_t m, const int64_t* rstep) {
          const float* p = base + roff[0];
          for (int64_t j = 0; j < m; ++j) {
            const float v = p[j * rstep[0]];
            if (R == Reduction::kMax)
              mx = (v > mx || std::isnan(v)) && !std::isnan(mx) ? v : mx;
            else
              sum += v;
          }
        });
        py[off[0] + e * step[0]] = R == Reduction::kMax    ? mx
                                   : R == Reduction::kMean ? static_cast<float>(sum * inv)
                                                           : static_cast<float>(sum);
      }
    });
    return Status::Ok();
  }
};

template <Reduction R>
Status create_reduce(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel) {
  const ReduceMeanAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<ReduceKernel<R>>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
