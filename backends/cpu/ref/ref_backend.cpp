// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The reference CPU backend: its op table, OpType -> kernel factory. Every op, float32, every version the
// core knows (core/ops/op_list.h).
#include "backends/cpu/ref/kernels.h"
#include "backends/op_table.h"
#include "backends/plan_check.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace {

using Table = OpTable<ref::KernelFactory>;

// Every op of core/ops/op_list.h, in its order (backends/op_table.h).
constexpr Table::Row kKernels[] = {
    Table::kernel(OpType::kConv2d, ref::create_conv2d),
    Table::kernel(OpType::kBatchNorm2d, ref::create_batch_norm2d),
    Table::kernel(OpType::kLinear, ref::create_linear),
    Table::kernel(OpType::kLayerNorm, ref::create_layer_norm),
    Table::kernel(OpType::kGelu, ref::create_gelu),
    Table::kernel(OpType::kRelu, ref::create_relu),
    Table::kernel(OpType::kAdd, ref::create_add),
    Table::kernel(OpType::kMul, ref::create_mul),
    Table::kernel(OpType::kConcat, ref::create_concat),
    Table::kernel(OpType::kSlice, ref::create_slice),
    Table::kernel(OpType::kReshape, ref::create_reshape),
    Table::kernel(OpType::kTranspose, ref::create_transpose),
    Table::kernel(OpType::kReduceMean, ref::create_reduce_mean),
    Table::kernel(OpType::kSoftmax, ref::create_softmax),
    Table::kernel(OpType::kSoftmaxAttention, ref::create_softmax_attention),
    Table::kernel(OpType::kAdaptiveAvgPool2d, ref::create_adaptive_avg_pool2d),
    Table::kernel(OpType::kLinearAttention, ref::create_linear_attention),
    Table::kernel(OpType::kReusedAttention, ref::create_reused_attention),
    Table::kernel(OpType::kAttentionResidual, ref::create_attention_residual),
    Table::kernel(OpType::kMatMul, ref::create_matmul),
    Table::kernel(OpType::kSub, ref::create_sub),
    Table::kernel(OpType::kDiv, ref::create_div),
    Table::kernel(OpType::kExp, ref::create_exp),
    Table::kernel(OpType::kReduceSum, ref::create_reduce_sum),
    Table::kernel(OpType::kReduceMax, ref::create_reduce_max),
    Table::kernel(OpType::kConvMlp, ref::create_conv_mlp),
    Table::kernel(OpType::kUnary, ref::create_unary),
    Table::kernel(OpType::kPow, ref::create_pow),
    Table::kernel(OpType::kMin, ref::create_min),
    Table::kernel(OpType::kMax, ref::create_max),
    Table::kernel(OpType::kPool2d, ref::create_pool2d),
    Table::kernel(OpType::kReduce, ref::create_reduce),
    Table::kernel(OpType::kLogSoftmax, ref::create_log_softmax),
    Table::kernel(OpType::kInstanceNorm, ref::create_instance_norm),
    Table::kernel(OpType::kCompare, ref::create_compare),
    Table::kernel(OpType::kWhere, ref::create_where),
    Table::kernel(OpType::kPad, ref::create_pad),
    Table::kernel(OpType::kExpand, ref::create_expand),
    Table::kernel(OpType::kSqueezeExcite, ref::create_squeeze_excite),
    Table::kernel(OpType::kFmod, ref::create_fmod),
    Table::kernel(OpType::kMod, ref::create_mod),
    Table::kernel(OpType::kConvTranspose, ref::create_conv_transpose),
    Table::kernel(OpType::kArgMax, ref::create_arg_max),
    Table::kernel(OpType::kTrilu, ref::create_trilu),
    Table::kernel(OpType::kCumSum, ref::create_cum_sum),
    Table::kernel(OpType::kGatherElements, ref::create_gather_elements),
    Table::kernel(OpType::kTopK, ref::create_top_k),
    Table::kernel(OpType::kResize, ref::create_resize),
    Table::kernel(OpType::kExternalAttention, ref::create_external_attention),
    Table::kernel(OpType::kPerformerAttention, ref::create_performer_attention),
    Table::kernel(OpType::kNystromAttention, ref::create_nystrom_attention),
    Table::kernel(OpType::kSelectiveKernel, ref::create_selective_kernel),
    Table::kernel(OpType::kScatterND, ref::create_scatter_nd),
    Table::kernel(OpType::kFastformerAttention, ref::create_fastformer_attention),
    Table::kernel(OpType::kKernelizedAttention, ref::create_kernelized_attention),
    Table::kernel(OpType::kPRelu, ref::create_prelu),
    Table::kernel(OpType::kLrn, ref::create_lrn),
};
static_assert(Table::complete(kKernels),
              "backends/cpu/ref/ref_backend.cpp: one row per op of core/ops/op_list.h, in its order");

static_assert(!Table::any(kKernels, OpImpl::kReference),
              "the reference backend has no reference to delegate to");

class ReferenceBackend final : public Backend {
 public:
  const char* name() const override { return "ref"; }
  bool batch_tile() const override { return true; }

  OpImpl op_impl(OpType type) const override {
    const Table::Row* row = Table::find(kKernels, type);
    return row ? row->impl : OpImpl::kNotImplemented;
  }

  bool supports(const Node& node) const override {
    const OpSchema* schema = find_op_schema(node.type);
    return op_impl(node.type) == OpImpl::kKernel && schema && node.version >= 1 &&
           node.version <= schema->max_version;
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
    VITRT_RETURN_IF_ERROR(Table::find(kKernels, node.type)->factory(plan, &k, info));
    *kernel = std::move(k);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Backend> create_reference_backend() {
  return std::make_unique<ReferenceBackend>();
}

}  // namespace vitrt
