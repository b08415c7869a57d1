// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cuda/binary.cuh"
#include "backends/cuda/host_plan.h"

namespace vitrt {
namespace cuda {
namespace {

struct AddOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MulOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a * b; }
};

template <class Op>
__global__ void binary_same_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y,
                                   int64_t n) {
  const Op op;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = op(a[i], b[i]);
}

template <class Op>
__global__ void binary_broadcast_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ y, const BroadcastPlan p) {
  const Op op;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < p.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t oa, ob;
    broadcast_offsets(p, i, &oa, &ob);
    y[i] = op(a[oa], b[ob]);
  }
}

template <class Op>
class BinaryKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;

 protected:
  Status launch(const KernelArgs& dev) override {
    const TensorRef& a = *dev.src[0];
    const TensorRef& b = *dev.src[1];
    TensorRef& y = *dev.dst[0];
    BroadcastPlan p;
    Status s = plan_broadcast(a.shape, b.shape, y.shape, &p);
    if (!s.ok()) return fail(s.message());
    if (p.numel == 0) return Status::Ok();
    const int threads = 256;
    const int64_t want = (p.numel + threads - 1) / threads;
    const int blocks = static_cast<int>(want < 65535 * 8 ? want : 65535 * 8);
    if (p.same)
      binary_same_kernel<Op><<<blocks, threads, 0, stream()>>>(a.f32(), b.f32(), y.f32(), p.numel);
    else
      binary_broadcast_kernel<Op><<<blocks, threads, 0, stream()>>>(a.f32(), b.f32(), y.f32(), p);
    return check_launch("binary kernel");
  }
};

}  // namespace

Status create_add(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                  KernelInfo* info) {
  info->workspace_bytes = 0;
  return make_cuda_kernel<BinaryKernel<AddOp>>(plan, kernel, ctx, plan);
}

Status create_mul(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                  KernelInfo* info) {
  info->workspace_bytes = 0;
  return make_cuda_kernel<BinaryKernel<MulOp>>(plan, kernel, ctx, plan);
}

}  // namespace cuda
}  // namespace vitrt
