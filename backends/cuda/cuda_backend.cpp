// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The CUDA backend: device probing, the per-instance context, and the OpType -> kernel factory dispatch.
#include "backends/cuda/cuda_backend.h"

#include <string>

#include "backends/cuda/binary.cuh"
#include "backends/cuda/cuda_common.h"
#include "backends/cuda/gelu.cuh"
#include "backends/cuda/host_plan.h"
#include "backends/cuda/layer_norm.cuh"
#include "backends/cuda/linear.cuh"
#include "backends/cuda/softmax_attention.cuh"
#include "backends/plan_check.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::shared_ptr<cuda::CudaContext> ctx) : ctx_(std::move(ctx)) {}

  const char* name() const override { return "cuda"; }

  bool supports(const Node& node) const override { return cuda::cuda_supports_node(node); }

  // Device buffers come from cudaMalloc (256-byte aligned); the device arenas of the next step use 256 too.
  size_t alignment() const override { return 256; }

  Status create_kernel(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) override {
    if (!plan.node || !kernel || !info)
      return invalid_argument("cuda backend: create_kernel needs a node and outputs");
    const Node& node = *plan.node;
    const std::string where = std::string(op_type_name(node.type)) + " '" + node.name + "'";
    if (!supports(node))
      return unsupported(where + " (version " + std::to_string(node.version) +
                         ") is not supported by backend 'cuda'");
    VITRT_RETURN_IF_ERROR(check_float32_plan(plan, "cuda"));
    *info = KernelInfo{};
    std::unique_ptr<Kernel> k;
    Status s;
    switch (node.type) {
      case OpType::kLinear:
        s = cuda::create_linear(ctx_, plan, &k, info);
        break;
      case OpType::kLayerNorm:
        s = cuda::create_layer_norm(ctx_, plan, &k, info);
        break;
      case OpType::kGelu:
        s = cuda::create_gelu(ctx_, plan, &k, info);
        break;
      case OpType::kAdd:
        s = cuda::create_add(ctx_, plan, &k, info);
        break;
      case OpType::kMul:
        s = cuda::create_mul(ctx_, plan, &k, info);
        break;
      case OpType::kSoftmaxAttention:
        s = cuda::create_softmax_attention(ctx_, plan, &k, info);
        break;
      default:
        s = unsupported(where + " is not supported by backend 'cuda'");
    }
    if (!s.ok()) return s;
    *kernel = std::move(k);
    return Status::Ok();
  }

 private:
  std::shared_ptr<cuda::CudaContext> ctx_;
};

}  // namespace

std::unique_ptr<Backend> create_cuda_backend(int device, Status* why) {
  Status local;
  Status& st = why ? *why : local;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    st = unsupported(std::string("no CUDA device: ") + cudaGetErrorString(e));
    return nullptr;
  }
  if (count <= 0) {
    st = unsupported("no CUDA device: cudaGetDeviceCount found 0 devices");
    return nullptr;
  }
  if (device < 0 || device >= count) {
    st = invalid_argument("CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                          " device" + (count == 1 ? "" : "s") + ")");
    return nullptr;
  }
  std::shared_ptr<cuda::CudaContext> ctx;
  Status c = cuda::CudaContext::create(device, &ctx);
  if (!c.ok()) {
    st = c;
    return nullptr;
  }
  st = Status::Ok();
  return std::make_unique<CudaBackend>(std::move(ctx));
}

}  // namespace vitrt
