// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "op_codes.h"

#include <cstddef>

namespace vitrt {
namespace {

using B = fb::BuiltinOp;
using O = fb::OpOptions;

struct OpCodeRow {
  OpType type;
  bool serialised;
  OpCode code;
};

constexpr OpCodeRow stored(OpType type, B builtin, O options) {
  return {type, true, {builtin, options}};
}
// An op with no code: the planner makes it inside a session (OpOrigin::kPlannerOnly).
constexpr OpCodeRow not_stored(OpType type) {
  return {type, false, {}};
}

// One row per op of core/ops/op_list.h, in its order. The codes are the file format's and never change.
constexpr OpCodeRow kOpCodes[] = {
    stored(OpType::kConv2d, B::CONV2D, O::Conv2dOptions),
    stored(OpType::kBatchNorm2d, B::BATCH_NORM2D, O::BatchNorm2dOptions),
    stored(OpType::kLinear, B::LINEAR, O::LinearOptions),
    stored(OpType::kLayerNorm, B::LAYER_NORM, O::LayerNormOptions),
    stored(OpType::kGelu, B::GELU, O::GeluOptions),
    stored(OpType::kRelu, B::RELU, O::NONE),
    stored(OpType::kAdd, B::ADD, O::NONE),
    stored(OpType::kMul, B::MUL, O::NONE),
    stored(OpType::kConcat, B::CONCAT, O::ConcatOptions),
    stored(OpType::kSlice, B::SLICE, O::SliceOptions),
    stored(OpType::kReshape, B::RESHAPE, O::ReshapeOptions),
    stored(OpType::kTranspose, B::TRANSPOSE, O::TransposeOptions),
    stored(OpType::kReduceMean, B::REDUCE_MEAN, O::ReduceMeanOptions),
    stored(OpType::kSoftmax, B::SOFTMAX, O::SoftmaxOptions),
    stored(OpType::kSoftmaxAttention, B::SOFTMAX_ATTENTION, O::SoftmaxAttentionOptions),
    stored(OpType::kAdaptiveAvgPool2d, B::ADAPTIVE_AVG_POOL2D, O::AdaptiveAvgPool2dOptions),
    stored(OpType::kLinearAttention, B::LINEAR_ATTENTION, O::LinearAttentionOptions),
    stored(OpType::kReusedAttention, B::REUSED_ATTENTION, O::ReusedAttentionOptions),
    stored(OpType::kAttentionResidual, B::ATTENTION_RESIDUAL, O::AttentionResidualOptions),
    stored(OpType::kMatMul, B::MATMUL, O::NONE),
    stored(OpType::kSub, B::SUB, O::NONE),
    stored(OpType::kDiv, B::DIV, O::NONE),
    stored(OpType::kExp, B::EXP, O::NONE),
    stored(OpType::kReduceSum, B::REDUCE_SUM, O::ReduceMeanOptions),
    stored(OpType::kReduceMax, B::REDUCE_MAX, O::ReduceMeanOptions),
    not_stored(OpType::kConvMlp),
    stored(OpType::kUnary, B::UNARY, O::UnaryOptions),
    stored(OpType::kPow, B::POW, O::NONE),
    stored(OpType::kMin, B::MINIMUM, O::NONE),
    stored(OpType::kMax, B::MAXIMUM, O::NONE),
    stored(OpType::kPool2d, B::POOL2D, O::Pool2dOptions),
    stored(OpType::kReduce, B::REDUCE, O::ReduceOptions),
    stored(OpType::kLogSoftmax, B::LOG_SOFTMAX, O::SoftmaxOptions),
    stored(OpType::kInstanceNorm, B::INSTANCE_NORM, O::InstanceNormOptions),
    stored(OpType::kCompare, B::COMPARE, O::CompareOptions),
    stored(OpType::kWhere, B::WHERE, O::NONE),
    stored(OpType::kPad, B::PAD, O::PadOptions),
    stored(OpType::kExpand, B::EXPAND, O::ExpandOptions),
    stored(OpType::kSqueezeExcite, B::SQUEEZE_EXCITE, O::SqueezeExciteOptions),
    stored(OpType::kFmod, B::FMOD, O::NONE),
    stored(OpType::kMod, B::MOD, O::NONE),
    stored(OpType::kConvTranspose, B::CONV_TRANSPOSE, O::ConvTransposeOptions),
    stored(OpType::kArgMax, B::ARG_MAX, O::ArgMaxOptions),
    stored(OpType::kTrilu, B::TRILU, O::TriluOptions),
    stored(OpType::kCumSum, B::CUM_SUM, O::CumSumOptions),
    stored(OpType::kGatherElements, B::GATHER_ELEMENTS, O::GatherElementsOptions),
    stored(OpType::kTopK, B::TOP_K, O::TopKOptions),
    stored(OpType::kResize, B::RESIZE, O::ResizeOptions),
    stored(OpType::kExternalAttention, B::EXTERNAL_ATTENTION, O::ExternalAttentionOptions),
    stored(OpType::kPerformerAttention, B::PERFORMER_ATTENTION, O::PerformerAttentionOptions),
    stored(OpType::kNystromAttention, B::NYSTROM_ATTENTION, O::NystromAttentionOptions),
    stored(OpType::kSelectiveKernel, B::SELECTIVE_KERNEL, O::SelectiveKernelOptions),
    stored(OpType::kScatterND, B::SCATTER_ND, O::ScatterNDOptions),
    stored(OpType::kFastformerAttention, B::FASTFORMER_ATTENTION, O::FastformerAttentionOptions),
    stored(OpType::kKernelizedAttention, B::KERNELIZED_ATTENTION, O::KernelizedAttentionOptions),
    stored(OpType::kPRelu, B::PRELU, O::NONE),
    stored(OpType::kLrn, B::LRN, O::LrnOptions),
};

// Codes in the schema that no file may hold, with the reason the loader gives (docs/format.md).
struct ReservedCode {
  B builtin;
  const char* why;
};
constexpr ReservedCode kReservedCodes[] = {
    {B::CONV_MLP, "ConvMlp is made by the planner inside a session and is never stored in a model file"},
};

// Every op has its row, in the op table's order; exactly the serialised ops have a code; no two ops and no
// reserved code share one.
constexpr bool table_is_complete() {
  if (sizeof(kOpCodes) / sizeof(kOpCodes[0]) != static_cast<size_t>(kNumOpTypes)) return false;
  for (int32_t i = 0; i < kNumOpTypes; ++i) {
    const OpCodeRow& r = kOpCodes[i];
    if (static_cast<int32_t>(r.type) != i) return false;
    if (r.serialised != (op_origin(r.type) == OpOrigin::kSerialised)) return false;
    if (!r.serialised) continue;
    for (int32_t j = 0; j < i; ++j)
      if (kOpCodes[j].serialised && kOpCodes[j].code.builtin == r.code.builtin) return false;
    for (const ReservedCode& reserved : kReservedCodes)
      if (reserved.builtin == r.code.builtin) return false;
  }
  return true;
}
static_assert(
    table_is_complete(),
    "formats/op_codes.cpp: one row per op of core/ops/op_list.h, in its order; a code for exactly the "
    "serialised ops; no code used twice or reserved");

}  // namespace

bool op_code_of(OpType type, OpCode* out) {
  const int32_t i = static_cast<int32_t>(type);
  if (!op_type_valid(i) || !kOpCodes[i].serialised) return false;
  *out = kOpCodes[i].code;
  return true;
}

Status op_type_of_code(fb::BuiltinOp builtin, OpType* out) {
  for (const OpCodeRow& r : kOpCodes)
    if (r.serialised && r.code.builtin == builtin) {
      *out = r.type;
      return Status::Ok();
    }
  const std::string code = std::to_string(static_cast<int32_t>(builtin));
  for (const ReservedCode& reserved : kReservedCodes)
    if (reserved.builtin == builtin)
      return unsupported("op code " + code + " (" + fb::EnumNameBuiltinOp(builtin) +
                         ") is reserved: " + reserved.why);
  return unsupported("unknown op " + code + " (written by a newer vitrt?)");
}

}  // namespace vitrt
