// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// MatMul: dst[..., M, N] = a[..., M, K] · b[..., K, N], batch axes broadcast. Loop order i-k-j with float
// accumulation (as Linear): each dst row accumulates K scaled, contiguous rows of b.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

// Batch-axis view of a [..., R, C] shape: `batch` keeps the leading axes.
Shape batch_axes(const Shape& s) {
  Shape b = s;
  b.rank = s.rank - 2;
  return b;
}

class MatMulKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& a = *args.src[0];
    const TensorRef& b = *args.src[1];
    TensorRef& y = *args.dst[0];
    const int64_t m = a.shape.dim(-2), k = a.shape.dim(-1), n = b.shape.dim(-1);
    const Shape yb = batch_axes(y.shape);
    int64_t sa[kMaxRank] = {}, sb[kMaxRank] = {};
    broadcast_strides(batch_axes(a.shape), yb, sa);
    broadcast_strides(batch_axes(b.shape), yb, sb);
    int64_t idx[kMaxRank] = {};
    const int64_t items = yb.numel();
    for (int64_t item = 0; item < items; ++item) {
      int64_t oa = 0, ob = 0;
      for (int i = 0; i < yb.rank; ++i) {
        oa += idx[i] * sa[i];
        ob += idx[i] * sb[i];
      }
      const float* pa = a.f32() + oa * m * k;
      const float* pb = b.f32() + ob * k * n;
      float* py = y.f32() + item * m * n;
      for (int64_t i = 0; i < m; ++i) {
        float* yr = py + i * n;
        for (int64_t j = 0; j < n; ++j) yr[j] = 0.0f;
        for (int64_t kk = 0; kk < k; ++kk) {
          const float av = pa[i * k + kk];
          const float* br = pb + kk * n;
          for (int64_t j = 0; j < n; ++j) yr[j] += av * br[j];
        }
      }
      for (int i = yb.rank - 1; i >= 0; --i) {  // next batch index, last axis fastest
        if (++idx[i] < yb[i]) break;
        idx[i] = 0;
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_matmul(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  *kernel = std::make_unique<MatMulKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
