// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Elementwise unary ops (Gelu, Relu, Exp, Unary): the output has the input's shape. Also the Unary op's
// attribute rules (ops/unary_attrs.h).
#include <cmath>

#include "ops/op_registry.h"
#include "ops/unary_attrs.h"

namespace vitrt {

const char* unary_kind_name(UnaryKind kind) {
  static const char* const kNames[kNumUnaryKinds] = {
      "Sqrt",      "Erf",    "Tanh",        "Sigmoid",   "Abs",
      "Neg",       "Log",    "Reciprocal",  "Floor",     "Ceil",
      "LeakyRelu", "Elu",    "HardSigmoid", "HardSwish", "Softplus",
      "Silu",      "Clip",   "Sin",         "Cos",       "Round",
      "Sign",      "Mish",   "Selu",        "Celu",      "ThresholdedRelu",
      "Softsign",  "Shrink", "Tan",         "Asin",      "Acos",
      "Atan",      "Sinh",   "Cosh",        "Asinh",     "Acosh",
      "Atanh"};
  const int k = static_cast<int>(kind);
  return k >= 0 && k < kNumUnaryKinds ? kNames[k] : "UnknownUnaryKind";
}

std::string unary_attrs_problem(const UnaryAttrs& a) {
  const int k = static_cast<int>(a.kind);
  if (k < 0 || k >= kNumUnaryKinds) return "kind " + std::to_string(k) + " is unknown";
  const std::string name = unary_kind_name(a.kind) + std::string("'s ");
  bool uses_alpha = false, uses_beta = false;
  switch (a.kind) {
    case UnaryKind::kLeakyRelu:
    case UnaryKind::kElu:
    case UnaryKind::kThresholdedRelu:
      uses_alpha = true;
      break;
    case UnaryKind::kCelu:
      if (a.alpha == 0.0f) return name + "alpha must not be 0 (it divides x)";
      uses_alpha = true;
      break;
    case UnaryKind::kHardSigmoid:
    case UnaryKind::kSelu:
      uses_alpha = uses_beta = true;
      break;
    case UnaryKind::kShrink:
      uses_alpha = uses_beta = true;
      break;
    case UnaryKind::kClip:
      if (std::isnan(a.alpha) || std::isnan(a.beta)) return name + "bound is NaN";
      return "";
    default:
      break;
  }
  if (uses_alpha ? !std::isfinite(a.alpha) : a.alpha != 0.0f)
    return name + "alpha " + std::to_string(a.alpha) +
           (uses_alpha ? " is not finite" : " must be 0 (unused)");
  if (uses_beta ? !std::isfinite(a.beta) : a.beta != 0.0f)
    return name + "beta " + std::to_string(a.beta) + (uses_beta ? " is not finite" : " must be 0 (unused)");
  return "";
}

Status infer_unary(const Node&, const Shape* const* src, int, Shape* dst) {
  dst[0] = *src[0];
  return Status::Ok();
}

Status infer_unary_kind(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const std::string why = unary_attrs_problem(std::get<UnaryAttrs>(node.attrs));
  if (!why.empty()) return bad_model("Unary: " + why);
  return infer_unary(node, src, num_src, dst);
}

}  // namespace vitrt
