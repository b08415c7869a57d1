// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cuda/layer_norm.cuh"

namespace vitrt {
namespace cuda {
namespace {

constexpr int kWarpsPerBlock = 8;

__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                  const float* __restrict__ beta, float* __restrict__ y, int64_t rows, int64_t c,
                                  double eps) {
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= rows) return;  // whole warp leaves together
  const float* xr = x + row * c;
  float* yr = y + row * c;
  double s = 0.0;
  for (int64_t i = lane; i < c; i += 32) s += xr[i];
  const double mean = warp_sum(s) / static_cast<double>(c);
  double v = 0.0;
  for (int64_t i = lane; i < c; i += 32) {
    const double d = xr[i] - mean;
    v += d * d;
  }
  const double var = warp_sum(v) / static_cast<double>(c);
  const double rstd = 1.0 / sqrt(var + eps);
  for (int64_t i = lane; i < c; i += 32) {
    double o = (xr[i] - mean) * rstd;
    if (gamma) o *= gamma[i];
    if (beta) o += beta[i];
    yr[i] = static_cast<float>(o);
  }
}

class LayerNormKernel final : public CudaKernel {
 public:
  LayerNormKernel(std::shared_ptr<CudaContext> ctx, const KernelPlan& plan, float eps)
      : CudaKernel(std::move(ctx), plan), eps_(eps) {}

 protected:
  Status launch(const KernelArgs& dev) override {
    const TensorRef& x = *dev.src[0];
    const float* gamma = dev.num_src > 1 && dev.src[1] ? dev.src[1]->f32() : nullptr;
    const float* beta = dev.num_src > 2 && dev.src[2] ? dev.src[2]->f32() : nullptr;
    const int64_t c = x.shape.rank > 0 ? x.shape.dim(-1) : 1;
    const int64_t rows = c > 0 ? x.numel() / c : 0;
    if (rows == 0 || c == 0) return Status::Ok();
    const int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
    if (blocks > 0x7fffffff) return fail("too many rows");
    layer_norm_kernel<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream()>>>(
        x.f32(), gamma, beta, dev.dst[0]->f32(), rows, c, static_cast<double>(eps_));
    return check_launch("layer_norm_kernel");
  }

 private:
  float eps_;
};

}  // namespace

Status create_layer_norm(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan,
                         std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const LayerNormAttrs& a = std::get<LayerNormAttrs>(plan.node->attrs);
  if (!(a.eps >= 0.0f)) return bad_model("LayerNorm '" + plan.node->name + "': eps must be >= 0");
  info->workspace_bytes = 0;
  return make_cuda_kernel<LayerNormKernel>(plan, kernel, ctx, plan, a.eps);
}

}  // namespace cuda
}  // namespace vitrt
