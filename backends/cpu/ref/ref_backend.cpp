// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The reference CPU backend: a table OpType -> kernel factory. Every op, float32, version 1.
#include "backends/cpu/ref/kernels.h"
#include "backends/plan_check.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace {

constexpr int32_t kRefMaxVersion = 1;

// Indexed by OpType.
const ref::KernelFactory kFactories[] = {
    ref::create_conv2d,             // kConv2d
    ref::create_batch_norm2d,       // kBatchNorm2d
    ref::create_linear,             // kLinear
    ref::create_layer_norm,         // kLayerNorm
    ref::create_gelu,               // kGelu
    ref::create_relu,               // kRelu
    ref::create_add,                // kAdd
    ref::create_mul,                // kMul
    ref::create_concat,             // kConcat
    ref::create_slice,              // kSlice
    ref::create_reshape,            // kReshape
    ref::create_transpose,          // kTranspose
    ref::create_reduce_mean,        // kReduceMean
    ref::create_softmax,            // kSoftmax
    ref::create_softmax_attention,  // kSoftmaxAttention
    ref::create_adaptive_avg_pool2d,  // kAdaptiveAvgPool2d
    ref::create_linear_attention,  // kLinearAttention
    ref::create_reused_attention,  // kReusedAttention
    ref::create_attention_residual,  // kAttentionResidual
    ref::create_matmul,             // kMatMul
    ref::create_sub,                // kSub
    ref::create_div,                // kDiv
    ref::create_exp,                // kExp
    ref::create_reduce_sum,         // kReduceSum
    ref::create_reduce_max,         // kReduceMax
    ref::create_conv_mlp,           // kConvMlp
};
static_assert(sizeof(kFactories) / sizeof(kFactories[0]) == kNumOpTypes, "one factory per op type");

class ReferenceBackend final : public Backend {
 public:
  const char* name() const override { return "ref"; }

  bool supports(const Node& node) const override {
    return op_type_valid(static_cast<int32_t>(node.type)) && node.version >= 1 &&
           node.version <= kRefMaxVersion;
  }

  Status create_kernel(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) override {
    if (!plan.node || !kernel || !info)
      return invalid_argument("ref backend: create_kernel needs a node and outputs");
    const Node& node = *plan.node;
    const std::string where = std::string(op_type_name(node.type)) + " '" + node.name + "'";
    if (!supports(node))
      return unsupported("ref backend: " + where + " (version " + std::to_string(node.version) +
                         ") is not supported");
    VITRT_RETURN_IF_ERROR(check_float32_plan(plan, "ref"));
    *info = KernelInfo{};
    std::unique_ptr<Kernel> k;
    VITRT_RETURN_IF_ERROR(kFactories[static_cast<int32_t>(node.type)](plan, &k, info));
    *kernel = std::move(k);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Backend> create_reference_backend() {
  return std::make_unique<ReferenceBackend>();
}

}  // namespace vitrt
