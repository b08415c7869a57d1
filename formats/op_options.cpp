// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "op_options.h"

#include <cmath>
#include <string>
#include <utility>

#include "op_codes.h"
#include "ops/external_attention_attrs.h"
#include "ops/kernelized_attention_attrs.h"
#include "ops/nystrom_attention_geometry.h"
#include "ops/performer_attention_geometry.h"
#include "ops/selective_kernel_attrs.h"
#include "ops/squeeze_excite_attrs.h"
#include "ops/unary_attrs.h"

namespace vitrt {
namespace {

fb::Activation to_fb(Activation a) {
  return static_cast<fb::Activation>(a);
}

bool activation_from_fb(fb::Activation a, Activation* out) {
  const int v = static_cast<int>(a);
  if (v < 0 || v > static_cast<int>(Activation::kRelu6)) return false;
  *out = static_cast<Activation>(v);
  return true;
}

}  // namespace

EncodedOptions encode_op_options(flatbuffers::FlatBufferBuilder& fbb, const Node& node) {
  EncodedOptions e;
  OpCode code;
  if (!op_code_of(node.type, &code)) return e;  // never written: the writer refuses such a graph first
  e.type = code.options;
  switch (node.type) {
    case OpType::kConv2d: {
      const auto& a = std::get<Conv2dAttrs>(node.attrs);
      e.offset = fb::CreateConv2dOptions(fbb, a.stride_h, a.stride_w, a.pad_h, a.pad_w, a.dilation_h,
                                         a.dilation_w, a.groups, to_fb(a.activation), a.channels_last)
                     .Union();
      break;
    }
    case OpType::kBatchNorm2d:
      e.offset = fb::CreateBatchNorm2dOptions(fbb, std::get<BatchNorm2dAttrs>(node.attrs).eps).Union();
      break;
    case OpType::kLinear:
      e.offset = fb::CreateLinearOptions(fbb, to_fb(std::get<LinearAttrs>(node.attrs).activation)).Union();
      break;
    case OpType::kLayerNorm:
      e.offset = fb::CreateLayerNormOptions(fbb, std::get<LayerNormAttrs>(node.attrs).eps).Union();
      break;
    case OpType::kGelu:
      e.offset = fb::CreateGeluOptions(
                     fbb, static_cast<fb::GeluApproximation>(std::get<GeluAttrs>(node.attrs).approximation))
                     .Union();
      break;
    case OpType::kConcat:
      e.offset = fb::CreateConcatOptions(fbb, std::get<ConcatAttrs>(node.attrs).axis).Union();
      break;
    case OpType::kSlice: {
      const auto& a = std::get<SliceAttrs>(node.attrs);
      e.offset = fb::CreateSliceOptions(fbb, a.axis, a.start, a.end, a.step).Union();
      break;
    }
    case OpType::kReshape:
      e.offset =
          fb::CreateReshapeOptions(fbb, fbb.CreateVector(std::get<ReshapeAttrs>(node.attrs).shape)).Union();
      break;
    case OpType::kTranspose:
      e.offset = fb::CreateTransposeOptions(fbb, fbb.CreateVector(std::get<TransposeAttrs>(node.attrs).perm))
                     .Union();
      break;
    case OpType::kReduceMean:
    case OpType::kReduceSum:
    case OpType::kReduceMax: {
      const auto& a = std::get<ReduceMeanAttrs>(node.attrs);
      e.offset = fb::CreateReduceMeanOptions(fbb, fbb.CreateVector(a.axes), a.keepdims).Union();
      break;
    }
    case OpType::kSoftmax:
    case OpType::kLogSoftmax:
      e.offset = fb::CreateSoftmaxOptions(fbb, std::get<SoftmaxAttrs>(node.attrs).axis).Union();
      break;
    case OpType::kSoftmaxAttention: {
      const auto& a = std::get<SoftmaxAttentionAttrs>(node.attrs);
      e.offset = fb::CreateSoftmaxAttentionOptions(
                     fbb, a.num_heads, a.scale, static_cast<fb::AttentionInputs>(a.inputs), a.scale_on_q,
                     a.qk_norm, a.qk_norm_eps, a.head_scales.empty() ? 0 : fbb.CreateVector(a.head_scales))
                     .Union();
      break;
    }
    case OpType::kAdaptiveAvgPool2d: {
      const auto& a = std::get<AdaptiveAvgPool2dAttrs>(node.attrs);
      e.offset = fb::CreateAdaptiveAvgPool2dOptions(fbb, a.out_h, a.out_w).Union();
      break;
    }
    case OpType::kLinearAttention: {
      const auto& a = std::get<LinearAttentionAttrs>(node.attrs);
      e.offset = fb::CreateLinearAttentionOptions(
                     fbb, a.num_heads, a.height, a.width, a.q_scale,
                     static_cast<fb::AttentionKernel>(a.kernel), static_cast<fb::LandmarkSource>(a.landmarks),
                     a.landmark_ratio, a.landmark_ln_eps, static_cast<fb::PseudoInverse>(a.pinv),
                     a.newton_iterations, a.newton_regularizer, a.symmetric_normalization)
                     .Union();
      break;
    }
    case OpType::kReusedAttention:
      e.offset =
          fb::CreateReusedAttentionOptions(fbb, std::get<ReusedAttentionAttrs>(node.attrs).num_heads).Union();
      break;
    case OpType::kAttentionResidual: {
      const auto& a = std::get<AttentionResidualAttrs>(node.attrs);
      e.offset = fb::CreateAttentionResidualOptions(fbb, a.height, a.width).Union();
      break;
    }
    case OpType::kUnary: {
      const auto& a = std::get<UnaryAttrs>(node.attrs);
      e.offset = fb::CreateUnaryOptions(fbb, static_cast<fb::UnaryKind>(a.kind), a.alpha, a.beta).Union();
      break;
    }
    case OpType::kPool2d: {
      const auto& a = std::get<Pool2dAttrs>(node.attrs);
      e.offset =
          fb::CreatePool2dOptions(fbb, static_cast<fb::PoolKind>(a.kind), a.kernel_h, a.kernel_w, a.stride_h,
                                  a.stride_w, a.pad_top, a.pad_left, a.pad_bottom, a.pad_right, a.dilation_h,
                                  a.dilation_w, a.ceil_mode, a.count_include_pad)
              .Union();
      break;
    }
    case OpType::kReduce: {
      const auto& a = std::get<ReduceAttrs>(node.attrs);
      e.offset = fb::CreateReduceOptions(fbb, static_cast<fb::ReduceKind>(a.kind), fbb.CreateVector(a.axes),
                                         a.keepdims)
                     .Union();
      break;
    }
    case OpType::kInstanceNorm:
      e.offset = fb::CreateInstanceNormOptions(fbb, std::get<InstanceNormAttrs>(node.attrs).eps).Union();
      break;
    case OpType::kCompare:
      e.offset =
          fb::CreateCompareOptions(fbb, static_cast<fb::CompareKind>(std::get<CompareAttrs>(node.attrs).kind))
              .Union();
      break;
    case OpType::kPad: {
      const auto& a = std::get<PadAttrs>(node.attrs);
      e.offset =
          fb::CreatePadOptions(fbb, static_cast<fb::PadMode>(a.mode), fbb.CreateVector(a.pads), a.value)
              .Union();
      break;
    }
    case OpType::kExpand:
      e.offset =
          fb::CreateExpandOptions(fbb, fbb.CreateVector(std::get<ExpandAttrs>(node.attrs).shape)).Union();
      break;
    case OpType::kSqueezeExcite: {
      const auto& a = std::get<SqueezeExciteAttrs>(node.attrs);
      e.offset =
          fb::CreateSqueezeExciteOptions(fbb, static_cast<fb::SqueezeActivation>(a.activation),
                                         static_cast<fb::ExciteGate>(a.gate), a.gate_alpha, a.gate_beta)
              .Union();
      break;
    }
    case OpType::kKernelizedAttention: {
      const auto& a = std::get<KernelizedAttentionAttrs>(node.attrs);
      e.offset = fb::CreateKernelizedAttentionOptions(fbb, static_cast<fb::KernelizedKind>(a.kind),
                                                      a.num_heads, a.eps, a.scale)
                     .Union();
      break;
    }
    case OpType::kConvTranspose: {
      const auto& a = std::get<ConvTransposeAttrs>(node.attrs);
      e.offset = fb::CreateConvTransposeOptions(fbb, a.stride_h, a.stride_w, a.pad_top, a.pad_left,
                                                a.pad_bottom, a.pad_right, a.dilation_h, a.dilation_w,
                                                a.output_padding_h, a.output_padding_w, a.groups)
                     .Union();
      break;
    }
    case OpType::kArgMax: {
      const auto& a = std::get<ArgMaxAttrs>(node.attrs);
      e.offset = fb::CreateArgMaxOptions(fbb, static_cast<fb::ArgKind>(a.kind), a.axis, a.keepdims,
                                         a.select_last_index)
                     .Union();
      break;
    }
    case OpType::kTrilu: {
      const auto& a = std::get<TriluAttrs>(node.attrs);
      e.offset = fb::CreateTriluOptions(fbb, a.upper, a.k).Union();
      break;
    }
    case OpType::kLrn: {
      const auto& a = std::get<LrnAttrs>(node.attrs);
      e.offset = fb::CreateLrnOptions(fbb, a.size, a.alpha, a.beta, a.bias).Union();
      break;
    }
    case OpType::kCumSum: {
      const auto& a = std::get<CumSumAttrs>(node.attrs);
      e.offset = fb::CreateCumSumOptions(fbb, a.axis, a.exclusive, a.reverse).Union();
      break;
    }
    case OpType::kGatherElements: {
      const auto& a = std::get<GatherElementsAttrs>(node.attrs);
      e.offset = fb::CreateGatherElementsOptions(fbb, a.axis).Union();
      break;
    }
    case OpType::kTopK: {
      const auto& a = std::get<TopKAttrs>(node.attrs);
      e.offset = fb::CreateTopKOptions(fbb, a.axis, a.k, a.largest).Union();
      break;
    }
    case OpType::kResize: {
      const auto& a = std::get<ResizeAttrs>(node.attrs);
      e.offset = fb::CreateResizeOptions(fbb, static_cast<fb::ResizeMode>(a.mode),
                                         static_cast<fb::ResizeCoordinate>(a.coordinate),
                                         static_cast<fb::ResizeNearest>(a.nearest), a.cubic_a,
                                         a.exclude_outside, fbb.CreateVector(a.sizes),
                                         fbb.CreateVector(a.steps), fbb.CreateVector(a.scales))
                     .Union();
      break;
    }
    case OpType::kExternalAttention: {
      const auto& a = std::get<ExternalAttentionAttrs>(node.attrs);
      e.offset = fb::CreateExternalAttentionOptions(fbb, a.num_heads, a.eps).Union();
      break;
    }
    case OpType::kPerformerAttention: {
      const auto& a = std::get<PerformerAttentionAttrs>(node.attrs);
      e.offset = fb::CreatePerformerAttentionOptions(fbb, a.heads, static_cast<fb::PerformerKernel>(a.kernel),
                                                     static_cast<fb::PerformerKeyMax>(a.key_max))
                     .Union();
      break;
    }
    case OpType::kNystromAttention: {
      const auto& a = std::get<NystromAttentionAttrs>(node.attrs);
      e.offset = fb::CreateNystromAttentionOptions(fbb, a.num_heads, a.landmarks, a.q_scale, a.k_scale,
                                                   static_cast<fb::NystromInit>(a.init), a.iterations)
                     .Union();
      break;
    }
    case OpType::kSelectiveKernel: {
      const auto& a = std::get<SelectiveKernelAttrs>(node.attrs);
      e.offset = fb::CreateSelectiveKernelOptions(fbb, a.branches,
                                                  static_cast<fb::SelectiveKernelActivation>(a.z_activation))
                     .Union();
      break;
    }
    case OpType::kScatterND: {
      const auto& a = std::get<ScatterNDAttrs>(node.attrs);
      e.offset = fb::CreateScatterNDOptions(fbb, static_cast<fb::ScatterReduction>(a.reduction)).Union();
      break;
    }
    case OpType::kFastformerAttention: {
      const auto& a = std::get<FastformerAttentionAttrs>(node.attrs);
      e.offset = fb::CreateFastformerAttentionOptions(fbb, a.heads, a.scale).Union();
      break;
    }
    case OpType::kConvMlp:  // made by the planner, never written (op_code_of above said so)
      break;
    case OpType::kPow:
    case OpType::kMin:
    case OpType::kMax:
    case OpType::kFmod:
    case OpType::kMod:
    case OpType::kPRelu:
    case OpType::kWhere:
    case OpType::kRelu:
    case OpType::kAdd:
    case OpType::kMatMul:
    case OpType::kSub:
    case OpType::kDiv:
    case OpType::kExp:
    case OpType::kMul:
      break;
  }
  return e;
}

Status decode_op_options(const fb::Operator& op, OpType type, const std::string& where, OpAttrs* out) {
  OpCode code;
  if (!op_code_of(type, &code))
    return bad_model(where + ": " + op_type_name(type) + " is never stored in a model file");
  const fb::OpOptions want = code.options;
  if (op.options_type() != want)
    return bad_model(where + ": options of type " + std::to_string(static_cast<int>(op.options_type())) +
                     " do not belong to this op (expected " + std::to_string(static_cast<int>(want)) + ")");
  if (want != fb::OpOptions::NONE && op.options() == nullptr) return bad_model(where + ": options missing");
  auto bad_enum = [&](const char* field) {
    return bad_model(where + ": invalid value of option '" + field + "'");
  };
  switch (type) {
    case OpType::kConv2d: {
      const auto* o = op.options_as_Conv2dOptions();
      Conv2dAttrs a;
      a.stride_h = o->stride_h();
      a.stride_w = o->stride_w();
      a.pad_h = o->pad_h();
      a.pad_w = o->pad_w();
      a.dilation_h = o->dilation_h();
      a.dilation_w = o->dilation_w();
      a.groups = o->groups();
      a.channels_last = o->channels_last();
      if (!activation_from_fb(o->activation(), &a.activation)) return bad_enum("activation");
      *out = a;
      break;
    }
    case OpType::kBatchNorm2d:
      *out = BatchNorm2dAttrs{op.options_as_BatchNorm2dOptions()->eps()};
      break;
    case OpType::kLinear: {
      LinearAttrs a;
      if (!activation_from_fb(op.options_as_LinearOptions()->activation(), &a.activation))
        return bad_enum("activation");
      *out = a;
      break;
    }
    case OpType::kLayerNorm:
      *out = LayerNormAttrs{op.options_as_LayerNormOptions()->eps()};
      break;
    case OpType::kGelu: {
      const int v = static_cast<int>(op.options_as_GeluOptions()->approximation());
      if (v < 0 || v > 1) return bad_enum("approximation");
      *out = GeluAttrs{static_cast<GeluApproximation>(v)};
      break;
    }
    case OpType::kConcat:
      *out = ConcatAttrs{op.options_as_ConcatOptions()->axis()};
      break;
    case OpType::kSlice: {
      const auto* o = op.options_as_SliceOptions();
      // The step is checked by the op's shape inference (core/ops/slice.cpp) against the op's version.
      *out = SliceAttrs{o->axis(), o->start(), o->end(), o->step()};
      break;
    }
    case OpType::kReshape: {
      const auto* s = op.options_as_ReshapeOptions()->shape();
      if (!s) return bad_model(where + ": Reshape without a target shape");
      *out = ReshapeAttrs{copy_int64_vector(*s)};
      break;
    }
    case OpType::kTranspose: {
      const auto* p = op.options_as_TransposeOptions()->perm();
      if (!p) return bad_model(where + ": Transpose without a permutation");
      *out = TransposeAttrs{std::vector<int32_t>(p->begin(), p->end())};
      break;
    }
    case OpType::kReduceMean:
    case OpType::kReduceSum:
    case OpType::kReduceMax: {
      const auto* o = op.options_as_ReduceMeanOptions();
      if (!o->axes()) return bad_model(where + ": reduction without axes");
      *out = ReduceMeanAttrs{std::vector<int32_t>(o->axes()->begin(), o->axes()->end()), o->keepdims()};
      break;
    }
    case OpType::kSoftmax:
    case OpType::kLogSoftmax:
      *out = SoftmaxAttrs{op.options_as_SoftmaxOptions()->axis()};
      break;
    case OpType::kSoftmaxAttention: {
      const auto* o = op.options_as_SoftmaxAttentionOptions();
      const int v = static_cast<int>(o->inputs());
      if (v < 0 || v > 2) return bad_enum("inputs");
      SoftmaxAttentionAttrs a{o->num_heads(), o->scale(), static_cast<AttentionInputs>(v), o->scale_on_q()};
      a.qk_norm = o->qk_norm();
      a.qk_norm_eps = o->qk_norm_eps();
      if (o->head_scales()) a.head_scales.assign(o->head_scales()->begin(), o->head_scales()->end());
      *out = std::move(a);
      break;
    }
    case OpType::kAdaptiveAvgPool2d: {
      const auto* o = op.options_as_AdaptiveAvgPool2dOptions();
      *out = AdaptiveAvgPool2dAttrs{o->out_h(), o->out_w()};
      break;
    }
    case OpType::kLinearAttention: {
      const auto* o = op.options_as_LinearAttentionOptions();
      LinearAttentionAttrs a;
      a.num_heads = o->num_heads();
      a.height = o->height();
      a.width = o->width();
      a.q_scale = o->q_scale();
      if (static_cast<int>(o->kernel()) != 0) return bad_enum("kernel");
      if (static_cast<int>(o->landmarks()) != 0) return bad_enum("landmarks");
      const int pinv = static_cast<int>(o->pinv());
      if (pinv < 0 || pinv > 1) return bad_enum("pinv");
      a.landmark_ratio = o->landmark_ratio();
      a.landmark_ln_eps = o->landmark_ln_eps();
      a.pinv = static_cast<PseudoInverse>(pinv);
      a.newton_iterations = o->newton_iterations();
      a.newton_regularizer = o->newton_regularizer();
      a.symmetric_normalization = o->symmetric_normalization();
      *out = a;
      break;
    }
    case OpType::kReusedAttention:
      *out = ReusedAttentionAttrs{op.options_as_ReusedAttentionOptions()->num_heads()};
      break;
    case OpType::kAttentionResidual: {
      const auto* o = op.options_as_AttentionResidualOptions();
      *out = AttentionResidualAttrs{o->height(), o->width()};
      break;
    }
    case OpType::kUnary: {
      const auto* o = op.options_as_UnaryOptions();
      const int kind = static_cast<int>(o->kind());
      if (kind < 0 || kind >= kNumUnaryKinds) return bad_enum("kind");
      const UnaryAttrs a{static_cast<UnaryKind>(kind), o->alpha(), o->beta()};
      const std::string why = unary_attrs_problem(a);
      if (!why.empty()) return bad_model(where + ": Unary options: " + why);
      *out = a;
      break;
    }
    case OpType::kPool2d: {
      // Sizes are checked by the op's shape inference (core/ops/pool2d.cpp), which names the op.
      const auto* o = op.options_as_Pool2dOptions();
      const int kind = static_cast<int>(o->kind());
      if (kind < 0 || kind > 1) return bad_enum("kind");
      Pool2dAttrs a;
      a.kind = static_cast<PoolKind>(kind);
      a.kernel_h = o->kernel_h();
      a.kernel_w = o->kernel_w();
      a.stride_h = o->stride_h();
      a.stride_w = o->stride_w();
      a.pad_top = o->pad_top();
      a.pad_left = o->pad_left();
      a.pad_bottom = o->pad_bottom();
      a.pad_right = o->pad_right();
      a.dilation_h = o->dilation_h();
      a.dilation_w = o->dilation_w();
      a.ceil_mode = o->ceil_mode();
      a.count_include_pad = o->count_include_pad();
      *out = a;
      break;
    }
    case OpType::kReduce: {
      const auto* o = op.options_as_ReduceOptions();
      const int kind = static_cast<int>(o->kind());
      if (kind < 0 || kind >= kNumReduceKinds) return bad_enum("kind");
      if (!o->axes()) return bad_model(where + ": Reduce without axes");
      *out = ReduceAttrs{static_cast<ReduceKind>(kind),
                         std::vector<int32_t>(o->axes()->begin(), o->axes()->end()), o->keepdims()};
      break;
    }
    case OpType::kInstanceNorm: {
      const float eps = op.options_as_InstanceNormOptions()->eps();
      if (!std::isfinite(eps) || eps < 0.0f)
        return bad_model(where + ": InstanceNorm epsilon must be finite and >= 0, got " +
                         std::to_string(eps));
      *out = InstanceNormAttrs{eps};
      break;
    }
    case OpType::kCompare: {
      const int kind = static_cast<int>(op.options_as_CompareOptions()->kind());
      if (kind < 0 || kind >= kNumCompareKinds) return bad_enum("kind");
      *out = CompareAttrs{static_cast<CompareKind>(kind)};
      break;
    }
    case OpType::kPad: {
      // The pads' count and values are checked by the op's shape inference (core/ops/pad.cpp).
      const auto* o = op.options_as_PadOptions();
      const int mode = static_cast<int>(o->mode());
      if (mode < 0 || mode > 2) return bad_enum("mode");
      if (!o->pads()) return bad_model(where + ": Pad without pads");
      *out = PadAttrs{static_cast<PadMode>(mode), copy_int64_vector(*o->pads()), o->value()};
      break;
    }
    case OpType::kExpand: {
      const auto* s = op.options_as_ExpandOptions()->shape();
      if (!s) return bad_model(where + ": Expand without a target shape");
      *out = ExpandAttrs{copy_int64_vector(*s)};
      break;
    }
    case OpType::kSqueezeExcite: {
      const auto* o = op.options_as_SqueezeExciteOptions();
      const int act = static_cast<int>(o->activation()), gate = static_cast<int>(o->gate());
      if (act < 0 || act >= kNumSqueezeActivations) return bad_enum("activation");
      if (gate < 0 || gate >= kNumExciteGates) return bad_enum("gate");
      const SqueezeExciteAttrs a{static_cast<SqueezeActivation>(act), static_cast<ExciteGate>(gate),
                                 o->gate_alpha(), o->gate_beta()};
      const std::string why = squeeze_excite_attrs_problem(a);
      if (!why.empty()) return bad_model(where + ": SqueezeExcite options: " + why);
      *out = a;
      break;
    }
    case OpType::kKernelizedAttention: {
      const auto* o = op.options_as_KernelizedAttentionOptions();
      const int kind = static_cast<int>(o->kind());
      if (kind < 0 || kind >= kNumKernelizedKinds) return bad_enum("kind");
      const KernelizedAttentionAttrs a{static_cast<KernelizedKind>(kind), o->num_heads(), o->eps(),
                                       o->scale()};
      const std::string why = kernelized_attention_attrs_problem(a);
      if (!why.empty()) return bad_model(where + ": KernelizedAttention options: " + why);
      *out = a;
      break;
    }
    case OpType::kConvTranspose: {
      // Sizes are checked by the op's shape inference (core/ops/conv_transpose.cpp), which names the op.
      const auto* o = op.options_as_ConvTransposeOptions();
      ConvTransposeAttrs a;
      a.stride_h = o->stride_h();
      a.stride_w = o->stride_w();
      a.pad_top = o->pad_top();
      a.pad_left = o->pad_left();
      a.pad_bottom = o->pad_bottom();
      a.pad_right = o->pad_right();
      a.dilation_h = o->dilation_h();
      a.dilation_w = o->dilation_w();
      a.output_padding_h = o->output_padding_h();
      a.output_padding_w = o->output_padding_w();
      a.groups = o->groups();
      *out = a;
      break;
    }
    case OpType::kArgMax: {
      const auto* o = op.options_as_ArgMaxOptions();
      const int kind = static_cast<int>(o->kind());
      if (kind < 0 || kind > 1) return bad_enum("kind");
      *out = ArgMaxAttrs{static_cast<ArgKind>(kind), o->axis(), o->keepdims(), o->select_last_index()};
      break;
    }
    case OpType::kTrilu: {
      // Any k is valid: one beyond the matrix keeps all or nothing.
      const auto* o = op.options_as_TriluOptions();
      *out = TriluAttrs{o->upper(), o->k()};
      break;
    }
    case OpType::kLrn: {
      // size, alpha, beta and bias are checked by the op's shape inference (core/ops/lrn.cpp).
      const auto* o = op.options_as_LrnOptions();
      *out = LrnAttrs{o->size(), o->alpha(), o->beta(), o->bias()};
      break;
    }
    case OpType::kCumSum: {
      // The axis is checked by the op's shape inference (core/ops/cum_sum.cpp), which names the op.
      const auto* o = op.options_as_CumSumOptions();
      *out = CumSumAttrs{o->axis(), o->exclusive(), o->reverse()};
      break;
    }
    case OpType::kGatherElements: {
      // Shapes are checked by the op's shape inference, index values by its kernels, naming the op.
      *out = GatherElementsAttrs{op.options_as_GatherElementsOptions()->axis()};
      break;
    }
    case OpType::kTopK: {
      // The axis and k are checked by the op's shape inference (core/ops/top_k.cpp), which names the op.
      const auto* o = op.options_as_TopKOptions();
      *out = TopKAttrs{o->axis(), o->k(), o->largest()};
      break;
    }
    case OpType::kResize: {
      const auto* o = op.options_as_ResizeOptions();
      // The enums are checked here; the axes, lengths and steps by the op's shape inference
      // (core/ops/resize.cpp).
      const int mode = static_cast<int>(o->mode()), coord = static_cast<int>(o->coordinate()),
                nearest = static_cast<int>(o->nearest());
      if (mode < 0 || mode >= kNumResizeModes) return bad_enum("mode");
      if (coord < 0 || coord >= kNumResizeCoordinates) return bad_enum("coordinate");
      if (nearest < 0 || nearest >= kNumResizeNearest) return bad_enum("nearest");
      if (!o->sizes() || !o->steps() || !o->scales())
        return bad_model(where + ": Resize without sizes, steps or scales");
      ResizeAttrs a;
      a.mode = static_cast<ResizeMode>(o->mode());
      a.coordinate = static_cast<ResizeCoordinate>(o->coordinate());
      a.nearest = static_cast<ResizeNearest>(o->nearest());
      a.cubic_a = o->cubic_a();
      a.exclude_outside = o->exclude_outside();
      a.sizes = copy_int64_vector(*o->sizes());
      a.steps.assign(o->steps()->begin(), o->steps()->end());
      a.scales = copy_double_vector(*o->scales());
      *out = std::move(a);
      break;
    }
    case OpType::kExternalAttention: {
      const auto* o = op.options_as_ExternalAttentionOptions();
      const ExternalAttentionAttrs a{o->heads(), o->eps()};
      const std::string why = external_attention_attrs_problem(a);
      if (!why.empty()) return bad_model(where + ": ExternalAttention options: " + why);
      *out = a;
      break;
    }
    case OpType::kPerformerAttention: {
      const auto* o = op.options_as_PerformerAttentionOptions();
      const PerformerAttentionAttrs a{o->heads(), static_cast<PerformerKernel>(o->kernel()),
                                      static_cast<PerformerKeyMax>(o->key_max())};
      const std::string why = performer_attention_attrs_problem(a);
      if (!why.empty()) return bad_model(where + ": PerformerAttention options: " + why);
      *out = a;
      break;
    }
    case OpType::kNystromAttention: {
      const auto* o = op.options_as_NystromAttentionOptions();
      const int init = static_cast<int>(o->init());
      if (init < 0 || init >= kNumNystromInits) return bad_enum("init");
      NystromAttentionAttrs a;
      a.num_heads = o->num_heads();
      a.landmarks = o->landmarks();
      a.q_scale = o->q_scale();
      a.k_scale = o->k_scale();
      a.init = static_cast<NystromInit>(init);
      a.iterations = o->iterations();
      const std::string why = nystrom_attrs_problem(a);
      if (!why.empty()) return bad_model(where + ": NystromAttention options: " + why);
      *out = a;
      break;
    }
    case OpType::kSelectiveKernel: {
      const auto* o = op.options_as_SelectiveKernelOptions();
      const int act = static_cast<int>(o->z_activation());
      if (act < 0 || act >= kNumSelectiveKernelActivations) return bad_enum("z_activation");
      const SelectiveKernelAttrs a{o->branches(), static_cast<SelectiveKernelActivation>(act)};
      const std::string why = selective_kernel_attrs_problem(a);
      if (!why.empty()) return bad_model(where + ": SelectiveKernel options: " + why);
      *out = a;
      break;
    }
    case OpType::kScatterND: {
      // Shapes are checked by the op's shape inference, index values by its kernels, naming the op.
      const int reduction = static_cast<int>(op.options_as_ScatterNDOptions()->reduction());
      if (reduction < 0 || reduction >= kNumScatterReductions) return bad_enum("reduction");
      *out = ScatterNDAttrs{static_cast<ScatterReduction>(reduction)};
      break;
    }
    case OpType::kFastformerAttention: {
      // heads and scale are checked by the op's shape inference (core/ops/fastformer_attention.cpp), which
      // names the op and what it expects.
      const auto* o = op.options_as_FastformerAttentionOptions();
      *out = FastformerAttentionAttrs{o->heads(), o->scale()};
      break;
    }
    case OpType::kConvMlp:  // made by the planner, never read (op_code_of above said so)
      break;
    case OpType::kPow:
    case OpType::kMin:
    case OpType::kMax:
    case OpType::kFmod:
    case OpType::kMod:
    case OpType::kPRelu:
    case OpType::kWhere:
    case OpType::kRelu:
    case OpType::kAdd:
    case OpType::kMatMul:
    case OpType::kSub:
    case OpType::kDiv:
    case OpType::kExp:
    case OpType::kMul:
      *out = NoAttrs{};
      break;
  }
  return Status::Ok();
}

}  // namespace vitrt
