// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cuda/activation.cuh"
#include "backends/cuda/host_plan.h"
#include "backends/cuda/linear.cuh"

namespace vitrt {
namespace cuda {
namespace {

// y[r, j] = act(y[r, j] + bias[j]) over rows x n elements; bias may be null.
template <Activation A>
__global__ void bias_act_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t total,
                                int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = y[i];
    if (bias) v += bias[i % n];
    y[i] = activate<A>(v);
  }
}

class LinearKernel final : public CudaKernel {
 public:
  LinearKernel(std::shared_ptr<CudaContext> ctx, const KernelPlan& plan, Activation act)
      : CudaKernel(std::move(ctx), plan), act_(act) {}

 protected:
  Status launch(const KernelArgs& dev) override {
    const TensorRef& x = *dev.src[0];
    const TensorRef& w = *dev.src[1];
    const float* bias = dev.num_src > 2 && dev.src[2] ? dev.src[2]->f32() : nullptr;
    float* y = dev.dst[0]->f32();
    const int64_t n = w.shape[0], k = w.shape[1];
    const int64_t rows = k > 0 ? x.numel() / k : dev.dst[0]->numel() / (n > 0 ? n : 1);
    const int64_t total = rows * n;
    if (total == 0) return Status::Ok();
    GemmArgs g;
    VITRT_RETURN_IF_ERROR(linear_gemm_args(rows, n, k, &g));
    if (k == 0) {
      VITRT_CUDA_CHECK(cudaMemsetAsync(y, 0, static_cast<size_t>(total) * sizeof(float), stream()), label_);
    } else {
      const float one = 1.0f, zero = 0.0f;
      VITRT_CUBLAS_CHECK(cublasSgemm(ctx_->cublas(), g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                     g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k, &one, w.f32(),
                                     g.lda, x.f32(), g.ldb, &zero, y, g.ldc),
                         label_);
    }
    if (!bias && act_ == Activation::kNone) return Status::Ok();
    const int threads = 256;
    const int64_t want = (total + threads - 1) / threads;
    const int blocks = static_cast<int>(want < 65535 * 8 ? want : 65535 * 8);
    switch (act_) {
      case Activation::kNone:
        bias_act_kernel<Activation::kNone><<<blocks, threads, 0, stream()>>>(y, bias, total, n);
        break;
      case Activation::kRelu:
        bias_act_kernel<Activation::kRelu><<<blocks, threads, 0, stream()>>>(y, bias, total, n);
        break;
      case Activation::kGeluErf:
        bias_act_kernel<Activation::kGeluErf><<<blocks, threads, 0, stream()>>>(y, bias, total, n);
        break;
      case Activation::kGeluTanh:
        bias_act_kernel<Activation::kGeluTanh><<<blocks, threads, 0, stream()>>>(y, bias, total, n);
        break;
      case Activation::kSilu:
      case Activation::kHardSwish:  // cuda_supports_node declines them
        return fail("no SiLU or HardSwish epilogue on CUDA");
    }
    return check_launch("bias/activation epilogue");
  }

 private:
  Activation act_;
};

}  // namespace

Status create_linear(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan,
                     std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const LinearAttrs& a = std::get<LinearAttrs>(plan.node->attrs);  // checked by cuda_supports_node
  const Shape& ws = plan.src_shapes[1];
  if (plan.num_src < 2 || ws.rank != 2)
    return bad_model("Linear '" + plan.node->name + "': weight must be [N,K]");
  GemmArgs g;
  const int64_t k = ws[1];
  VITRT_RETURN_IF_ERROR(linear_gemm_args(k > 0 ? plan.src_shapes[0].numel() / k : 0, ws[0], k, &g));
  info->workspace_bytes = 0;
  info->may_inplace = false;
  return make_cuda_kernel<LinearKernel>(plan, kernel, ctx, plan, a.activation);
}

}  // namespace cuda
}  // namespace vitrt
