// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Where: dst = cond != 0 ? a : b, the three inputs broadcast together (numpy rules). Booleans are float 0/1
// (core/ir/op_attrs.h); a NaN condition is non-zero and picks a.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class WhereKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& c = *args.src[0];
    const TensorRef& a = *args.src[1];
    const TensorRef& b = *args.src[2];
    TensorRef& y = *args.dst[0];
    int64_t sy[kMaxRank], sc[kMaxRank], sa[kMaxRank], sb[kMaxRank];
    contiguous_strides(y.shape, sy);
    broadcast_strides(c.shape, y.shape, sc);
    broadcast_strides(a.shape, y.shape, sa);
    broadcast_strides(b.shape, y.shape, sb);
    LoopNest nest;
    const int64_t* st[4] = {sy, sc, sa, sb};
    nest.init(y.shape.rank, y.shape.dims, 4, st);
    const float *pc = c.f32(), *pa = a.f32(), *pb = b.f32();
    float* py = y.f32();
    nest.for_each_row([&](const int64_t* off, int64_t n, const int64_t* inner) {
      float* d = py + off[0];
      const float *cr = pc + off[1], *ar = pa + off[2], *br = pb + off[3];
      for (int64_t i = 0; i < n; ++i) d[i] = cr[i * inner[1]] != 0.0f ? ar[i * inner[2]] : br[i * inner[3]];
    });
    return Status::Ok();
  }
};

}  // namespace

Status create_where(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  // Never in place: dst may alias none of the inputs, whose elements are read at broadcast positions.
  *kernel = std::make_unique<WhereKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
