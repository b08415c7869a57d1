// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// InstanceNorm (core/ir/op_attrs.h, InstanceNormAttrs): each (b, c) plane of [B,C,D1,...] normalised over its
// spatial elements, mean and biased variance in double (two passes), then scale[c]·(x − mean)/sqrt(var + eps)
// + bias[c].
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class InstanceNormKernel final : public RefKernel {
 public:
  using RefKernel::RefKernel;

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const float* scale = args.src[1]->f32();
    const float* bias = args.src[2]->f32();
    const double eps = std::get<InstanceNormAttrs>(node_.attrs).eps;
    const int64_t batch = x.shape[0], channels = x.shape[1];
    int64_t plane = 1;
    for (int i = 2; i < x.shape.rank; ++i) plane *= x.shape[i];
    const float* px = x.f32();
    float* py = args.dst[0]->f32();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t at = (b * channels + c) * plane;
        const float* src = px + at;
        float* dst = py + at;
        double mean = 0.0;
        for (int64_t i = 0; i < plane; ++i) mean += src[i];
        mean /= static_cast<double>(plane);
        double var = 0.0;
        for (int64_t i = 0; i < plane; ++i) var += (src[i] - mean) * (src[i] - mean);
        var /= static_cast<double>(plane);
        const double k = scale[c] / std::sqrt(var + eps);
        for (int64_t i = 0; i < plane; ++i) dst[i] = static_cast<float>((src[i] - mean) * k + bias[c]);
      }
    }
    return Status::Ok();
  }
};

}  // namespace

Status create_instance_norm(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const InstanceNormAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<InstanceNormKernel>(plan);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
