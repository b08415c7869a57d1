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
    if (plan.num_src < 0 || plan.num_src > kMaxOpInputs || plan.num_dst < 1 || plan.num_dst > kMaxOpOutputs)
      return bad_model("cuda backend: " + where + ": bad operand counts");
    for (int i = 0; i < plan.num_src; ++i)
      if (plan.src_tensors[i] && plan.src_tensors[i]->dtype != DType::kFloat32)
        return unsupported("cuda backend: " + where + ": input " + std::to_string(i) + " is " +
                           dtype_name(plan.src_tensors[i]->dtype) + ", only float32 is implemented");
    // The planned shapes must be what the op's own shape inference says.
    const Shape* shapes[kMaxOpInputs] = {};
    for (int i = 0; i < plan.num_src; ++i)
      if (plan.src_tensors[i] || plan.src_shapes[i].rank > 0) shapes[i] = &plan.src_shapes[i];
    Shape want[kMaxOpOutputs];
    Status s = infer_node_shapes(node, shapes, plan.num_src, want);
    if (!s.ok()) return s.with_context("cuda backend: " + where);
    for (int o = 0; o < plan.num_dst; ++o)
      if (want[o] != plan.dst_shapes[o])
        return bad_model("cuda backend: " + where + ": planned output " + std::to_string(o) + " " +
                         plan.dst_shapes[o].str() + " disagrees with shape inference " + want[o].str());
    *info = KernelInfo{};
    std::unique_ptr<Kernel> k;
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
