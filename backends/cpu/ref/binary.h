// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Elementwise binary ops with numpy broadcasting (Add, Mul): dst = f(a, b), dst contiguous.
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {

template <class Op>
class BinaryKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& a = *args.src[0];
    const TensorRef& b = *args.src[1];
    TensorRef& y = *args.dst[0];
    int64_t sy[kMaxRank], sa[kMaxRank], sb[kMaxRank];
    contiguous_strides(y.shape, sy);
    broadcast_strides(a.shape, y.shape, sa);
    broadcast_strides(b.shape, y.shape, sb);
    LoopNest nest;
    const int64_t* st[3] = {sy, sa, sb};
    nest.init(y.shape.rank, y.shape.dims, 3, st);
    const float* pa = a.f32();
    const float* pb = b.f32();
    float* py = y.f32();
    const Op op;
    nest.for_each_row([&](const int64_t* off, int64_t n, const int64_t* inner) {
      float* d = py + off[0];
      const float* x = pa + off[1];
      const float* z = pb + off[2];
      if (inner[1] == 1 && inner[2] == 1) {
        for (int64_t i = 0; i < n; ++i) d[i] = op(x[i], z[i]);
      } else if (inner[1] == 1 && inner[2] == 0) {
        const float zv = *z;
        for (int64_t i = 0; i < n; ++i) d[i] = op(x[i], zv);
      } else if (inner[1] == 0 && inner[2] == 1) {
        const float xv = *x;
        for (int64_t i = 0; i < n; ++i) d[i] = op(xv, z[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) d[i] = op(x[i * inner[1]], z[i * inner[2]]);
      }
    });
    return Status::Ok();
  }
};

template <class Op>
Status create_binary(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  *kernel = std::make_unique<BinaryKernel<Op>>(plan);
  // In place only when dst has src[0]'s shape: each dst element is written after its own src[0] element is
  // read.
  info->may_inplace = plan.num_dst == 1 && plan.num_src == 2 && plan.src_shapes[0] == plan.dst_shapes[0];
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
