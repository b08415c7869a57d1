// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The CUDA backend: device probing, the per-instance context, and its op table (OpType -> kernel factory).
#include "backends/cuda/cuda_backend.h"

#include <string>

#include "backends/cuda/binary.cuh"
#include "backends/cuda/cuda_common.h"
#include "backends/cuda/gelu.cuh"
#include "backends/cuda/host_plan.h"
#include "backends/cuda/layer_norm.cuh"
#include "backends/cuda/linear.cuh"
#include "backends/cuda/softmax_attention.cuh"
#include "backends/op_table.h"
#include "backends/plan_check.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace {

using Factory = Status (*)(const std::shared_ptr<cuda::CudaContext>& ctx, const KernelPlan& plan,
                           std::unique_ptr<Kernel>* kernel, KernelInfo* info);
using Table = OpTable<Factory>;

// Every op of core/ops/op_list.h, in its order (backends/op_table.h). A session on "cuda" fails on the ops
// not implemented here (no fallback to the CPU yet, docs/architecture.md §13); host_plan.cpp's
// cuda_supports_node further narrows the attributes each kernel takes.
constexpr Table::Row kKernels[] = {
    Table::not_implemented(OpType::kConv2d),
    Table::not_implemented(OpType::kBatchNorm2d),
    Table::kernel(OpType::kLinear, cuda::create_linear),
    Table::kernel(OpType::kLayerNorm, cuda::create_layer_norm),
    Table::kernel(OpType::kGelu, cuda::create_gelu),
    Table::not_implemented(OpType::kRelu),
    Table::kernel(OpType::kAdd, cuda::create_add),
    Table::kernel(OpType::kMul, cuda::create_mul),
    Table::not_implemented(OpType::kConcat),
    Table::not_implemented(OpType::kSlice),
    Table::not_implemented(OpType::kReshape),
    Table::not_implemented(OpType::kTranspose),
    Table::not_implemented(OpType::kReduceMean),
    Table::not_implemented(OpType::kSoftmax),
    Table::kernel(OpType::kSoftmaxAttention, cuda::create_softmax_attention),
    Table::not_implemented(OpType::kAdaptiveAvgPool2d),
    Table::not_implemented(OpType::kLinearAttention),
    Table::not_implemented(OpType::kReusedAttention),
    Table::not_implemented(OpType::kAttentionResidual),
    Table::not_implemented(OpType::kMatMul),
    Table::not_implemented(OpType::kSub),
    Table::not_implemented(OpType::kDiv),
    Table::not_implemented(OpType::kExp),
    Table::not_implemented(OpType::kReduceSum),
    Table::not_implemented(OpType::kReduceMax),
    Table::not_implemented(OpType::kConvMlp),
    Table::not_implemented(OpType::kUnary),
    Table::not_implemented(OpType::kPow),
    Table::not_implemented(OpType::kMin),
    Table::not_implemented(OpType::kMax),
    Table::not_implemented(OpType::kPool2d),
    Table::not_implemented(OpType::kReduce),
    Table::not_implemented(OpType::kLogSoftmax),
    Table::not_implemented(OpType::kInstanceNorm),
    Table::not_implemented(OpType::kCompare),
    Table::not_implemented(OpType::kWhere),
    Table::not_implemented(OpType::kPad),
    Table::not_implemented(OpType::kExpand),
    Table::not_implemented(OpType::kSqueezeExcite),
    Table::not_implemented(OpType::kFmod),
    Table::not_implemented(OpType::kMod),
    Table::not_implemented(OpType::kConvTranspose),
    Table::not_implemented(OpType::kArgMax),
    Table::not_implemented(OpType::kTrilu),
    Table::not_implemented(OpType::kCumSum),
    Table::not_implemented(OpType::kGatherElements),
    Table::not_implemented(OpType::kTopK),
    Table::not_implemented(OpType::kResize),
    Table::not_implemented(OpType::kExternalAttention),
    Table::not_implemented(OpType::kPerformerAttention),
    Table::not_implemented(OpType::kNystromAttention),
    Table::not_implemented(OpType::kSelectiveKernel),
    Table::not_implemented(OpType::kScatterND),
    Table::not_implemented(OpType::kFastformerAttention),
    Table::not_implemented(OpType::kKernelizedAttention),
    Table::not_implemented(OpType::kPRelu),
    Table::not_implemented(OpType::kLrn),
};
static_assert(Table::complete(kKernels),
              "backends/cuda/cuda_backend.cpp: one row per op of core/ops/op_list.h, in its order");
static_assert(!Table::any(kKernels, OpImpl::kReference),
              "the CUDA backend does not delegate to the reference kernels");

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::shared_ptr<cuda::CudaContext> ctx) : ctx_(std::move(ctx)) {}

  const char* name() const override { return "cuda"; }

  OpImpl op_impl(OpType type) const override { return cuda_op_impl(type); }

  bool supports(const Node& node) const override {
    return op_impl(node.type) == OpImpl::kKernel && cuda::cuda_supports_node(node);
  }

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
    VITRT_RETURN_IF_ERROR(Table::find(kKernels, node.type)->factory(ctx_, plan, &k, info));
    *kernel = std::move(k);
    return Status::Ok();
  }

 private:
  std::shared_ptr<cuda::CudaContext> ctx_;
};

}  // namespace

OpImpl cuda_op_impl(OpType type) {
  const Table::Row* row = Table::find(kKernels, type);
  return row ? row->impl : OpImpl::kNotImplemented;
}

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
    st = invalid_argument("CUDA device " + std::to_string(device) + " does not exist (" +
                          std::to_string(count) + " device" + (count == 1 ? "" : "s") + ")");
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
