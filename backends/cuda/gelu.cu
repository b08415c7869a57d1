// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cuda/activation.cuh"
#include "backends/cuda/gelu.cuh"

namespace vitrt {
namespace cuda {
namespace {

template <Activation A>
__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = activate<A>(x[i]);
}

class GeluKernel final : public CudaKernel {
 public:
  GeluKernel(std::shared_ptr<CudaContext> ctx, const KernelPlan& plan, bool tanh_form)
      : CudaKernel(std::move(ctx), plan), tanh_(tanh_form) {}

 protected:
  Status launch(const KernelArgs& dev) override {
    const int64_t n = dev.src[0]->numel();
    if (n == 0) return Status::Ok();
    const int threads = 256;
    const int64_t want = (n + threads - 1) / threads;
    const int blocks = static_cast<int>(want < 65535 * 8 ? want : 65535 * 8);
    if (tanh_)
      gelu_kernel<Activation::kGeluTanh><<<blocks, threads, 0, stream()>>>(dev.src[0]->f32(), dev.dst[0]->f32(), n);
    else
      gelu_kernel<Activation::kGeluErf><<<blocks, threads, 0, stream()>>>(dev.src[0]->f32(), dev.dst[0]->f32(), n);
    return check_launch("gelu_kernel");
  }

 private:
  bool tanh_;
};

}  // namespace

Status create_gelu(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                   KernelInfo* info) {
  const GeluAttrs& a = std::get<GeluAttrs>(plan.node->attrs);
  info->workspace_bytes = 0;
  return make_cuda_kernel<GeluKernel>(plan, kernel, ctx, plan, a.approximation == GeluApproximation::kTanh);
}

}  // namespace cuda
}  // namespace vitrt
