// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The operators of the IR. Values match `BuiltinOp` in formats/schema/vitrt.fbs: append, never renumber.
#include <cstdint>

namespace vitrt {

enum class OpType : int32_t {
  kConv2d = 0,
  kBatchNorm2d = 1,
  kLinear = 2,
  kLayerNorm = 3,
  kGelu = 4,
  kRelu = 5,
  kAdd = 6,
  kMul = 7,
  kConcat = 8,
  kSlice = 9,
  kReshape = 10,
  kTranspose = 11,
  kReduceMean = 12,
  kSoftmax = 13,
  kSoftmaxAttention = 14,
  kAdaptiveAvgPool2d = 15,
  kLinearAttention = 16,
  kReusedAttention = 17,
  kAttentionResidual = 18,
  kMatMul = 19,
  kSub = 20,
  kDiv = 21,
  kExp = 22,
  kReduceSum = 23,
  kReduceMax = 24,
  kConvMlp = 25,
};
constexpr int32_t kNumOpTypes = 26;

inline bool op_type_valid(int32_t v) { return v >= 0 && v < kNumOpTypes; }

}  // namespace vitrt
