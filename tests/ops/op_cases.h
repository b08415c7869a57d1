// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The PyTorch op cases written by tools/reference/make_op_cases.py (manifest.json + .npy files), loaded into
// OpTypes, OpAttrs and tensors ready for OpRunner.
//
// A case may list "extra_outputs": [{"expected64", "expected32"}, ...]: its node then has 1 + that many
// outputs. It is loaded as one OpCase per output, named "<name>" (output 0) and "<name>:out<k>", each
// registered in output_selections() so that OpRunner plans all the node's outputs and reports the case's own.
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/npy.h"
#include "op_test_util.h"

namespace vitrt {
namespace test {

struct OpCaseInput {
  bool present = false;
  bool constant = false;  // a weight: a graph constant
  bool batched = false;   // dim 0 is the batch
  HostTensor tensor;
};

struct OpCase {
  std::string name;
  OpType type = OpType::kAdd;
  OpAttrs attrs;
  std::vector<OpCaseInput> inputs;
  Shape out_shape;
  std::vector<double> expected64, expected32;
  bool batchable = false;
  int num_outputs = 1;   // outputs of the node
  int output_index = 0;  // the output this case checks

  std::vector<const HostTensor*> input_ptrs() const {
    std::vector<const HostTensor*> v;
    for (const auto& i : inputs) v.push_back(i.present ? &i.tensor : nullptr);
    return v;
  }
  std::vector<bool> constant_flags() const {
    std::vector<bool> v;
    for (const auto& i : inputs) v.push_back(i.constant);
    return v;
  }
};

// The op-case directory: $VITRT_FIXTURE_DIR/op_cases, or "" when the variable is unset.
inline std::string op_cases_dir() {
  const char* d = std::getenv("VITRT_FIXTURE_DIR");
  return d ? std::string(d) + "/op_cases" : std::string();
}

inline bool op_type_from_name(const std::string& s, OpType* out) {
  for (int32_t i = 0; i < kNumOpTypes; ++i)
    if (s == op_type_name(static_cast<OpType>(i))) {
      *out = static_cast<OpType>(i);
      return true;
    }
  return false;
}

inline Activation activation_from_name(const std::string& s) {
  if (s == "relu") return Activation::kRelu;
  if (s == "gelu_erf") return Activation::kGeluErf;
  if (s == "gelu_tanh") return Activation::kGeluTanh;
  return Activation::kNone;
}

inline OpAttrs attrs_from_json(OpType type, const nlohmann::json& j) {
  switch (type) {
    case OpType::kConv2d: {
      Conv2dAttrs a;
      a.stride_h = j.at("stride_h");
      a.stride_w = j.at("stride_w");
      a.pad_h = j.at("pad_h");
      a.pad_w = j.at("pad_w");
      a.dilation_h = j.at("dilation_h");
      a.dilation_w = j.at("dilation_w");
      a.groups = j.at("groups");
      a.activation = activation_from_name(j.at("activation"));
      a.channels_last = j.value("channels_last", false);
      return a;
    }
    case OpType::kBatchNorm2d:
      return BatchNorm2dAttrs{j.at("eps").get<float>()};
    case OpType::kLinear:
      return LinearAttrs{activation_from_name(j.at("activation"))};
    case OpType::kLayerNorm:
      return LayerNormAttrs{j.at("eps").get<float>()};
    case OpType::kGelu:
      return GeluAttrs{j.at("approximation") == "tanh" ? GeluApproximation::kTanh : GeluApproximation::kErf};
    case OpType::kConcat:
      return ConcatAttrs{j.at("axis").get<int32_t>()};
    case OpType::kSlice: {
      SliceAttrs a;
      a.axis = j.at("axis");
      a.start = j.at("start");
      a.end = j.at("end");
      a.step = j.value("step", int64_t{1});
      return a;
    }
    case OpType::kReshape:
      return ReshapeAttrs{j.at("shape").get<std::vector<int64_t>>()};
    case OpType::kTranspose:
      return TransposeAttrs{j.at("perm").get<std::vector<int32_t>>()};
    case OpType::kReduceMean:
    case OpType::kReduceSum:
    case OpType::kReduceMax:
      return ReduceMeanAttrs{j.at("axes").get<std::vector<int32_t>>(), j.at("keepdims").get<bool>()};
    case OpType::kSoftmax:
      return SoftmaxAttrs{j.at("axis").get<int32_t>()};
    case OpType::kSoftmaxAttention: {
      SoftmaxAttentionAttrs a;
      a.num_heads = j.at("num_heads");
      a.scale = j.at("scale");
      const std::string l = j.at("inputs");
      a.inputs = l == "qkv"    ? AttentionInputs::kQkvPacked
                 : l == "q_kv" ? AttentionInputs::kQKvPacked
                               : AttentionInputs::kSeparate;
      return a;
    }
    case OpType::kAdaptiveAvgPool2d:
      return AdaptiveAvgPool2dAttrs{j.at("out_h").get<int32_t>(), j.at("out_w").get<int32_t>()};
    case OpType::kLinearAttention: {
      LinearAttentionAttrs a;
      a.num_heads = j.at("num_heads");
      a.height = j.at("height");
      a.width = j.at("width");
      a.q_scale = j.at("q_scale");
      a.landmark_ratio = j.at("landmark_ratio");
      a.landmark_ln_eps = j.value("landmark_ln_eps", 1e-5f);
      a.pinv = j.at("pinv") == "newton_legacy" ? PseudoInverse::kNewtonLegacy : PseudoInverse::kNewtonScaled;
      a.newton_iterations = j.value("newton_iterations", 20);
      a.newton_regularizer = j.value("newton_regularizer", 0.01f);
      a.symmetric_normalization = j.value("symmetric_normalization", false);
      return a;
    }
    case OpType::kNystromAttention: {
      NystromAttentionAttrs a;
      a.num_heads = j.at("num_heads");
      a.landmarks = j.at("landmarks");
      a.q_scale = j.at("q_scale");
      a.k_scale = j.at("k_scale");
      a.init = j.at("init") == "global" ? NystromInit::kGlobal : NystromInit::kPerHead;
      a.iterations = j.value("iterations", 6);
      return a;
    }
    case OpType::kFastformerAttention:
      return FastformerAttentionAttrs{j.at("heads").get<int32_t>(), j.at("scale").get<float>()};
    case OpType::kReusedAttention:
      return ReusedAttentionAttrs{j.at("num_heads").get<int32_t>()};
    case OpType::kAttentionResidual:
      return AttentionResidualAttrs{j.at("height").get<int32_t>(), j.at("width").get<int32_t>()};
    case OpType::kConvMlp: {
      ConvMlpAttrs a;
      a.height = j.at("height");
      a.width = j.at("width");
      a.pad_h = j.at("pad_h");
      a.pad_w = j.at("pad_w");
      a.fc1_activation = activation_from_name(j.at("fc1_activation"));
      a.dw_activation = activation_from_name(j.at("dw_activation"));
      a.fc2_activation = activation_from_name(j.at("fc2_activation"));
      return a;
    }
    case OpType::kPool2d: {
      Pool2dAttrs a;
      a.kind = j.at("kind") == "average" ? PoolKind::kAverage : PoolKind::kMax;
      a.kernel_h = j.at("kernel_h");
      a.kernel_w = j.at("kernel_w");
      a.stride_h = j.at("stride_h");
      a.stride_w = j.at("stride_w");
      a.pad_top = j.at("pad_top");
      a.pad_left = j.at("pad_left");
      a.pad_bottom = j.at("pad_bottom");
      a.pad_right = j.at("pad_right");
      a.dilation_h = j.at("dilation_h");
      a.dilation_w = j.at("dilation_w");
      a.ceil_mode = j.at("ceil_mode");
      a.count_include_pad = j.at("count_include_pad");
      return a;
    }
    case OpType::kReduce: {
      static const std::map<std::string, ReduceKind> kinds = {{"min", ReduceKind::kMin},
                                                              {"prod", ReduceKind::kProd},
                                                              {"l1", ReduceKind::kL1},
                                                              {"l2", ReduceKind::kL2},
                                                              {"sum_square", ReduceKind::kSumSquare},
                                                              {"log_sum", ReduceKind::kLogSum},
                                                              {"log_sum_exp", ReduceKind::kLogSumExp}};
      return ReduceAttrs{kinds.at(j.at("kind").get<std::string>()), j.at("axes").get<std::vector<int32_t>>(),
                         j.at("keepdims").get<bool>()};
    }
    case OpType::kLogSoftmax:
      return SoftmaxAttrs{j.at("axis").get<int32_t>()};
    case OpType::kInstanceNorm:
      return InstanceNormAttrs{j.at("eps").get<float>()};
    case OpType::kCompare: {
      static const std::map<std::string, CompareKind> kinds = {
          {"equal", CompareKind::kEqual},
          {"less", CompareKind::kLess},
          {"greater", CompareKind::kGreater},
          {"less_or_equal", CompareKind::kLessOrEqual},
          {"greater_or_equal", CompareKind::kGreaterOrEqual},
          {"not_equal", CompareKind::kNotEqual}};
      return CompareAttrs{kinds.at(j.at("kind").get<std::string>())};
    }
    case OpType::kPad: {
      PadAttrs a;
      const std::string mode = j.at("mode");
      a.mode = mode == "reflect" ? PadMode::kReflect : mode == "edge" ? PadMode::kEdge : PadMode::kConstant;
      a.pads = j.at("pads").get<std::vector<int64_t>>();
      a.value = j.at("value");
      return a;
    }
    case OpType::kExpand:
      return ExpandAttrs{j.at("shape").get<std::vector<int64_t>>()};
    case OpType::kSqueezeExcite: {
      SqueezeExciteAttrs a;
      a.activation = j.at("activation") == "silu" ? SqueezeActivation::kSilu : SqueezeActivation::kRelu;
      a.gate = j.at("gate") == "hard_sigmoid" ? ExciteGate::kHardSigmoid : ExciteGate::kSigmoid;
      a.gate_alpha = j.at("gate_alpha");
      a.gate_beta = j.at("gate_beta");
      return a;
    }
    case OpType::kSelectiveKernel:
      return SelectiveKernelAttrs{j.at("branches").get<int32_t>(), j.at("z_activation") == "relu"
                                                                       ? SelectiveKernelActivation::kRelu
                                                                       : SelectiveKernelActivation::kNone};
    case OpType::kKernelizedAttention: {
      const std::string kind = j.at("kind");
      KernelizedAttentionAttrs a;
      a.kind = kind == "elu_scaled"     ? KernelizedKind::kEluScaled
               : kind == "softmax_pair" ? KernelizedKind::kSoftmaxPair
                                        : KernelizedKind::kEluNormalized;
      a.num_heads = j.at("num_heads");
      a.eps = j.at("eps");
      a.scale = j.at("scale");
      return a;
    }
    case OpType::kConvTranspose: {
      ConvTransposeAttrs a;
      a.stride_h = j.at("stride_h");
      a.stride_w = j.at("stride_w");
      a.pad_top = j.at("pad_top");
      a.pad_left = j.at("pad_left");
      a.pad_bottom = j.at("pad_bottom");
      a.pad_right = j.at("pad_right");
      a.dilation_h = j.at("dilation_h");
      a.dilation_w = j.at("dilation_w");
      a.output_padding_h = j.at("output_padding_h");
      a.output_padding_w = j.at("output_padding_w");
      a.groups = j.at("groups");
      return a;
    }
    case OpType::kPerformerAttention: {
      PerformerAttentionAttrs a;
      a.heads = j.at("heads");
      a.kernel = j.at("kernel") == "generalized" ? PerformerKernel::kGeneralized : PerformerKernel::kSoftmax;
      a.key_max = j.at("key_max") == "global" ? PerformerKeyMax::kGlobal : PerformerKeyMax::kPerHead;
      return a;
    }
    case OpType::kArgMax:
      return ArgMaxAttrs{j.at("kind") == "min" ? ArgKind::kMin : ArgKind::kMax, j.at("axis").get<int32_t>(),
                         j.at("keepdims").get<bool>(), j.at("select_last_index").get<bool>()};
    case OpType::kResize: {
      static const std::map<std::string, ResizeMode> modes = {
          {"nearest", ResizeMode::kNearest}, {"linear", ResizeMode::kLinear}, {"cubic", ResizeMode::kCubic}};
      static const std::map<std::string, ResizeCoordinate> coords = {
          {"half_pixel", ResizeCoordinate::kHalfPixel},
          {"pytorch_half_pixel", ResizeCoordinate::kPytorchHalfPixel},
          {"align_corners", ResizeCoordinate::kAlignCorners},
          {"asymmetric", ResizeCoordinate::kAsymmetric},
          {"tf_half_pixel_for_nn", ResizeCoordinate::kTfHalfPixelForNn}};
      static const std::map<std::string, ResizeNearest> nearests = {
          {"round_prefer_floor", ResizeNearest::kRoundPreferFloor},
          {"round_prefer_ceil", ResizeNearest::kRoundPreferCeil},
          {"floor", ResizeNearest::kFloor},
          {"ceil", ResizeNearest::kCeil}};
      ResizeAttrs a;
      a.mode = modes.at(j.at("mode").get<std::string>());
      a.coordinate = coords.at(j.at("coordinate").get<std::string>());
      a.nearest = nearests.at(j.at("nearest").get<std::string>());
      a.cubic_a = j.at("cubic_a");
      a.exclude_outside = j.at("exclude_outside");
      a.sizes = j.at("sizes").get<std::vector<int64_t>>();
      a.steps = j.at("steps").get<std::vector<float>>();
      a.scales = j.at("scales").get<std::vector<double>>();
      return a;
    }
    case OpType::kExternalAttention:
      return ExternalAttentionAttrs{j.at("heads").get<int32_t>(), j.at("eps").get<float>()};
    default:
      return NoAttrs{};
  }
}

inline Status load_op_cases(const std::string& dir, std::vector<OpCase>* cases) {
  std::ifstream f(dir + "/manifest.json");
  if (!f) return io_error("cannot open " + dir + "/manifest.json (run tools/reference/make_op_cases.py)");
  nlohmann::json m;
  try {
    f >> m;
    for (const auto& jc : m.at("cases")) {
      OpCase c;
      c.name = jc.at("name");
      if (!op_type_from_name(jc.at("op"), &c.type)) return bad_input("unknown op in case " + c.name);
      c.attrs = attrs_from_json(c.type, jc.at("attrs"));
      for (const auto& ji : jc.at("inputs")) {
        OpCaseInput in;
        if (!ji.is_null()) {
          in.present = true;
          in.constant = ji.at("const");
          in.batched = ji.at("batched");
          std::vector<int64_t> shape;
          VITRT_RETURN_IF_ERROR(
              read_npy_f32(dir + "/" + ji.at("file").get<std::string>(), &in.tensor.data, &shape));
          if (!Shape::from_vector(shape, &in.tensor.shape)) return bad_input("rank too large in " + c.name);
        }
        c.inputs.push_back(std::move(in));
      }
      std::vector<int64_t> shape, shape32;
      VITRT_RETURN_IF_ERROR(
          read_npy_f64(dir + "/" + jc.at("expected64").get<std::string>(), &c.expected64, &shape));
      VITRT_RETURN_IF_ERROR(
          read_npy_f64(dir + "/" + jc.at("expected32").get<std::string>(), &c.expected32, &shape32));
      if (!Shape::from_vector(shape, &c.out_shape) || shape != shape32)
        return bad_input("bad expected shape in " + c.name);
      c.batchable = jc.value("batchable", false);
      std::vector<OpCase> extra;
      if (jc.contains("extra_outputs")) {
        const auto& jx = jc.at("extra_outputs");
        c.num_outputs = 1 + static_cast<int>(jx.size());
        if (c.num_outputs > kMaxOpOutputs) return bad_input("too many outputs in " + c.name);
        for (size_t k = 0; k < jx.size(); ++k) {
          OpCase e;
          e.name = c.name + ":out" + std::to_string(k + 1);
          e.type = c.type;
          e.attrs = c.attrs;
          e.inputs = c.inputs;
          e.batchable = c.batchable;
          e.num_outputs = c.num_outputs;
          e.output_index = static_cast<int>(k + 1);
          VITRT_RETURN_IF_ERROR(
              read_npy_f64(dir + "/" + jx[k].at("expected64").get<std::string>(), &e.expected64, &shape));
          VITRT_RETURN_IF_ERROR(
              read_npy_f64(dir + "/" + jx[k].at("expected32").get<std::string>(), &e.expected32, &shape32));
          if (!Shape::from_vector(shape, &e.out_shape) || shape != shape32)
            return bad_input("bad expected shape in " + e.name);
          extra.push_back(std::move(e));
        }
      }
      if (c.num_outputs > 1) output_selections()[c.name] = OutputSelection{c.num_outputs, 0};
      cases->push_back(std::move(c));
      for (auto& e : extra) {
        output_selections()[e.name] = OutputSelection{e.num_outputs, e.output_index};
        cases->push_back(std::move(e));
      }
    }
  } catch (const std::exception& e) {
    return bad_input(std::string("bad op-case manifest: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace test
}  // namespace vitrt
