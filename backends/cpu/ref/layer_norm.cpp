// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LayerNorm over the last axis: (x - mean) / sqrt(var + eps) · γ + β, biased variance. Statistics are taken
// in double with two passes, and each output is rounded to float once.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class LayerNormKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const double eps = std::get<LayerNormAttrs>(node_.attrs).eps;
    const TensorRef& x = *args.src[0];
    const float* gamma = args.num_src > 1 && args.src[1] ? args.src[1]->f32() : nullptr;
    const float* beta = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const int64_t c = x.shape.dim(-1);
    const int64_t rows = c > 0 ? x.numel() / c : 0;
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.f32() + r * c;
      float* yr = args.dst[0]->f32() + r * c;
      double mean = 0.0;
      for (int64_t i = 0; i < c; ++i) mean += xr[i];
      mean /= static_cast<double>(c);
      double var = 0.0;
      for (int64_t i = 0; i < c; ++i) {
        const double d = xr[i] - mean;
        var += d * d;
      }
      var /= static_cast<double>(c);
      const double rstd = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < c; ++i) {
        double v = (xr[i] - mean) * rstd;
        if (gamma) v *= gamma[i];
        if (beta) v += beta[i];
        yr[i] = static_cast<float>(v);
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_layer_norm(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const LayerNormAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  if (!(a->eps >= 0.0f)) return bad_model("LayerNorm '" + plan.node->name + "': eps must be >= 0");
  *kernel = std::make_unique<LayerNormKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
