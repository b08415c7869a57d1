// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The functions of the Unary op (ir/op_attrs.h, UnaryKind), one float32 element at a time, as ONNX's and
// PyTorch's float32 kernels compute them. Clamps let NaN through (torch.clamp, numpy.clip), unlike std::min.
// with_unary_function() hands a kind's function to a loop, so that the reference kernel and the x86
// backend's threaded fallback (backends/cpu/x86/unary.cpp) share one definition of each kind's math.
#include <cmath>

#include "ir/op_attrs.h"

namespace vitrt {
namespace ref {

// min(max(x, lo), hi): NaN stays NaN; with lo > hi every value becomes hi (as torch.clamp and numpy.clip).
inline float clamp_nan(float x, float lo, float hi) {
  const float y = x < lo ? lo : x;
  return y > hi ? hi : y;
}

inline float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));  // e^-x = inf for x < -88 gives 0, as torch.sigmoid
}

inline float leaky_relu(float x, float alpha) {
  return x < 0.0f ? alpha * x : x;
}

inline float elu(float x, float alpha) {
  return x < 0.0f ? alpha * std::expm1(x) : x;
}

inline float hard_sigmoid(float x, float alpha, float beta) {
  return clamp_nan(alpha * x + beta, 0.0f, 1.0f);
}

// x·clamp(x/6 + 1/2, 0, 1) (ONNX HardSwish; torch's x·relu6(x + 3)/6 is the same up to rounding)
inline float hard_swish(float x) {
  return x * clamp_nan(x / 6.0f + 0.5f, 0.0f, 1.0f);
}

// log(1 + e^x) written as max(x, 0) + log1p(e^-|x|): no overflow for large x, no lost digits for very
// negative x.
inline float softplus(float x) {
  return std::fmax(x, 0.0f) + std::log1p(std::exp(-std::fabs(x)));
}

// x·sigmoid(x), as torch.nn.functional.silu computes it: x / (1 + e^-x).
inline float silu(float x) {
  return x / (1.0f + std::exp(-x));
}

// -1, 0 or 1; ±0 gives +0 and NaN stays NaN (numpy.sign, which ONNX's Sign follows; torch.sign maps NaN to
// 0).
inline float sign(float x) {
  return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? 0.0f : x;
}

// x·tanh(softplus(x)) (torch.nn.functional.mish). -inf gives -inf·0 = NaN, as torch and ONNX's reference.
inline float mish(float x) {
  return x * std::tanh(softplus(x));
}

// x > 0 ? gamma·x : gamma·alpha·(e^x - 1), e^x - 1 as expm1 (no cancellation near 0); NaN stays NaN.
inline float selu(float x, float alpha, float gamma) {
  return x > 0.0f ? gamma * x : gamma * (alpha * std::expm1(x));
}

// max(0, x) + min(0, alpha·(e^(x/alpha) - 1)) (ONNX Celu, torch.celu), which is x for x > 0 and the second
// term otherwise, whatever alpha's sign.
inline float celu(float x, float alpha) {
  return x > 0.0f ? x : alpha * std::expm1(x / alpha);
}

// x above alpha, else 0; NaN stays NaN (ONNX's reference clips to [alpha, inf) then zeroes alpha).
inline float thresholded_relu(float x, float alpha) {
  return x > alpha ? x : x <= alpha ? 0.0f : x;
}

// ONNX Shrink (torch's hardshrink with bias 0, softshrink with bias = lambd): NaN gives 0, as ONNX's
// reference (both comparisons are false).
inline float shrink(float x, float lambd, float bias) {
  return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0f;
}

// Calls loop(f) once with f the per-element function of a.kind (alpha and beta bound), so that the loop is
// compiled per kind and decides nothing per element. a is well formed (ops/unary_attrs.h).
template <class Loop>
void with_unary_function(const UnaryAttrs& a, Loop&& loop) {
  const float alpha = a.alpha, beta = a.beta;
  switch (a.kind) {
    case UnaryKind::kSqrt:
      return loop([](float x) { return std::sqrt(x); });
    case UnaryKind::kErf:
      return loop([](float x) { return std::erf(x); });
    case UnaryKind::kTanh:
      return loop([](float x) { return std::tanh(x); });
    case UnaryKind::kSigmoid:
      return loop(sigmoid);
    case UnaryKind::kAbs:
      return loop([](float x) { return std::fabs(x); });
    case UnaryKind::kNeg:
      return loop([](float x) { return -x; });
    case UnaryKind::kLog:
      return loop([](float x) { return std::log(x); });
    case UnaryKind::kReciprocal:
      return loop([](float x) { return 1.0f / x; });
    case UnaryKind::kFloor:
      return loop([](float x) { return std::floor(x); });
    case UnaryKind::kCeil:
      return loop([](float x) { return std::ceil(x); });
    case UnaryKind::kLeakyRelu:
      return loop([alpha](float x) { return leaky_relu(x, alpha); });
    case UnaryKind::kElu:
      return loop([alpha](float x) { return elu(x, alpha); });
    case UnaryKind::kHardSigmoid:
      return loop([alpha, beta](float x) { return hard_sigmoid(x, alpha, beta); });
    case UnaryKind::kHardSwish:
      return loop(hard_swish);
    case UnaryKind::kSoftplus:
      return loop(softplus);
    case UnaryKind::kSilu:
      return loop(silu);
    case UnaryKind::kClip:
      return loop([alpha, beta](float x) { return clamp_nan(x, alpha, beta); });
    case UnaryKind::kSin:
      return loop([](float x) { return std::sin(x); });
    case UnaryKind::kCos:
      return loop([](float x) { return std::cos(x); });
    case UnaryKind::kRound:
      // nearbyint rounds halves to even in the default rounding mode, which the library never changes.
      return loop([](float x) { return std::nearbyint(x); });
    case UnaryKind::kSign:
      return loop(sign);
    case UnaryKind::kMish:
      return loop(mish);
    case UnaryKind::kSelu:
      return loop([alpha, beta](float x) { return selu(x, alpha, beta); });
    case UnaryKind::kCelu:
      return loop([alpha](float x) { return celu(x, alpha); });
    case UnaryKind::kThresholdedRelu:
      return loop([alpha](float x) { return thresholded_relu(x, alpha); });
    case UnaryKind::kSoftsign:
      return loop([](float x) { return x / (1.0f + std::fabs(x)); });
    case UnaryKind::kShrink:
      return loop([alpha, beta](float x) { return shrink(x, alpha, beta); });
    case UnaryKind::kTan:
      return loop([](float x) { return std::tan(x); });
    case UnaryKind::kAsin:
      return loop([](float x) { return std::asin(x); });
    case UnaryKind::kAcos:
      return loop([](float x) { return std::acos(x); });
    case UnaryKind::kAtan:
      return loop([](float x) { return std::atan(x); });
    case UnaryKind::kSinh:
      return loop([](float x) { return std::sinh(x); });
    case UnaryKind::kCosh:
      return loop([](float x) { return std::cosh(x); });
    case UnaryKind::kAsinh:
      return loop([](float x) { return std::asinh(x); });
    case UnaryKind::kAcosh:
      return loop([](float x) { return std::acosh(x); });
    case UnaryKind::kAtanh:
      return loop([](float x) { return std::atanh(x); });
  }
}

}  // namespace ref
}  // namespace vitrt
