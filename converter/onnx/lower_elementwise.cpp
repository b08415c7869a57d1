// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The elementwise ONNX ops: Add, Sub, Mul, Div, Pow, Min, Max, Mod (numpy broadcasting), PRelu, and the
// one-input functions, which become Relu, Exp or the IR's Unary op (docs/onnx.md, the lowering table).
#include <cmath>
#include <limits>

#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_binary(ImportContext& cx, int, const NodeProto& n) {
  static const std::map<std::string, OpType> ops = {
      {"Add", OpType::kAdd}, {"Sub", OpType::kSub}, {"Mul", OpType::kMul}, {"Div", OpType::kDiv}};
  int32_t a, b;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &a));
  // x / 2^k is x · 2^-k exactly (both are the correctly rounded same real number): written as the Mul the
  // .pth route builds (DeiT's distilled head average), so the planner sees one form.
  OnnxValue* d;
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &d));
  if (n.op_type() == "Div" && d->is_const && d->kind == ConstKind::kFloat && d->numel() == 1 &&
      d->shape.size() <= 1) {
    int e = 0;
    const float c = d->f[0];
    if (std::isfinite(c) && c != 0 && std::fabs(std::frexp(c, &e)) == 0.5f && e > -120 && e < 120) {
      const int32_t r = cx.add_constant(n.output(0) + ".reciprocal", {1}, {1.0f / c});
      return emit(cx, n, OpType::kMul, NoAttrs{}, {a, r}, n.output(0));
    }
  }
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &b));
  return emit(cx, n, ops.at(n.op_type()), NoAttrs{}, {a, b}, n.output(0));
}

// The ONNX one-input functions that are one Unary kind, with the parameters their attributes give.
Status unary_attrs_of(ImportContext& cx, const NodeProto& n, UnaryAttrs* a) {
  static const std::map<std::string, UnaryKind> kinds = {{"Sqrt", UnaryKind::kSqrt},
                                                         {"Erf", UnaryKind::kErf},
                                                         {"Tanh", UnaryKind::kTanh},
                                                         {"Sigmoid", UnaryKind::kSigmoid},
                                                         {"Abs", UnaryKind::kAbs},
                                                         {"Log", UnaryKind::kLog},
                                                         {"Floor", UnaryKind::kFloor},
                                                         {"Ceil", UnaryKind::kCeil},
                                                         {"LeakyRelu", UnaryKind::kLeakyRelu},
                                                         {"Elu", UnaryKind::kElu},
                                                         {"HardSigmoid", UnaryKind::kHardSigmoid},
                                                         {"HardSwish", UnaryKind::kHardSwish},
                                                         {"Softplus", UnaryKind::kSoftplus},
                                                         {"Sin", UnaryKind::kSin},
                                                         {"Cos", UnaryKind::kCos},
                                                         {"Round", UnaryKind::kRound},
                                                         {"Sign", UnaryKind::kSign},
                                                         {"Mish", UnaryKind::kMish},
                                                         {"Selu", UnaryKind::kSelu},
                                                         {"Celu", UnaryKind::kCelu},
                                                         {"ThresholdedRelu", UnaryKind::kThresholdedRelu},
                                                         {"Softsign", UnaryKind::kSoftsign},
                                                         {"Shrink", UnaryKind::kShrink},
                                                         {"Tan", UnaryKind::kTan},
                                                         {"Asin", UnaryKind::kAsin},
                                                         {"Acos", UnaryKind::kAcos},
                                                         {"Atan", UnaryKind::kAtan},
                                                         {"Sinh", UnaryKind::kSinh},
                                                         {"Cosh", UnaryKind::kCosh},
                                                         {"Asinh", UnaryKind::kAsinh},
                                                         {"Acosh", UnaryKind::kAcosh},
                                                         {"Atanh", UnaryKind::kAtanh}};
  *a = UnaryAttrs{kinds.at(n.op_type()), 0.0f, 0.0f};
  // ONNX's defaults (operators of opset 6 and later).
  if (a->kind == UnaryKind::kLeakyRelu) a->alpha = cx.attr_float(n, "alpha", 0.01f);
  if (a->kind == UnaryKind::kElu) a->alpha = cx.attr_float(n, "alpha", 1.0f);
  if (a->kind == UnaryKind::kHardSigmoid) {
    a->alpha = cx.attr_float(n, "alpha", 0.2f);
    a->beta = cx.attr_float(n, "beta", 0.5f);
  }
  if (a->kind == UnaryKind::kSelu) {  // ONNX's defaults are the SELU paper's constants rounded to float
    a->alpha = cx.attr_float(n, "alpha", 1.67326319217681884765625f);
    a->beta = cx.attr_float(n, "gamma", 1.05070102214813232421875f);
  }
  if (a->kind == UnaryKind::kCelu || a->kind == UnaryKind::kThresholdedRelu)
    a->alpha = cx.attr_float(n, "alpha", 1.0f);
  if (a->kind == UnaryKind::kShrink) {
    a->alpha = cx.attr_float(n, "lambd", 0.5f);
    a->beta = cx.attr_float(n, "bias", 0.0f);
  }
  if (!std::isfinite(a->alpha) || !std::isfinite(a->beta))
    return cx.bad_node(n, a->kind == UnaryKind::kSelu     ? "alpha and gamma must be finite"
                          : a->kind == UnaryKind::kShrink ? "lambd and bias must be finite"
                                                          : "alpha and beta must be finite");
  if (a->kind == UnaryKind::kCelu && a->alpha == 0.0f) return cx.bad_node(n, "alpha must not be 0");
  return Status::Ok();
}

// Gelu (opset 20): the IR's Gelu, exact erf form or tanh approximation.
Status lower_gelu(ImportContext& cx, int, const NodeProto& n) {
  if (cx.opset() < 20) return cx.bad_node(n, "Gelu is an operator of opset 20 and later");
  const std::string approx = cx.attr_string(n, "approximate", "none");
  if (approx != "none" && approx != "tanh")
    return cx.bad_node(n, "approximate '" + approx + "', expected 'none' or 'tanh'");
  int32_t x;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &x));
  return emit(cx, n, OpType::kGelu,
              GeluAttrs{approx == "tanh" ? GeluApproximation::kTanh : GeluApproximation::kErf}, {x},
              n.output(0));
}

Status lower_unary(ImportContext& cx, int, const NodeProto& n) {
  int32_t x;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &x));
  const std::string& op = n.op_type();
  if (op == "Relu") return emit(cx, n, OpType::kRelu, NoAttrs{}, {x}, n.output(0));
  if (op == "Exp") return emit(cx, n, OpType::kExp, NoAttrs{}, {x}, n.output(0));
  // Exact rewrites: -x = x·(-1); 1/x = 1 ÷ x (both correctly rounded).
  if (op == "Neg") {
    const int32_t m = cx.add_constant(n.output(0) + ".minus_one", {1}, {-1.0f});
    return emit(cx, n, OpType::kMul, NoAttrs{}, {x, m}, n.output(0));
  }
  if (op == "Reciprocal") {
    const int32_t one = cx.add_constant(n.output(0) + ".one", {1}, {1.0f});
    return emit(cx, n, OpType::kDiv, NoAttrs{}, {one, x}, n.output(0));
  }
  UnaryAttrs a;
  VITRT_RETURN_IF_ERROR(unary_attrs_of(cx, n, &a));
  return emit(cx, n, OpType::kUnary, a, {x}, n.output(0));
}

// A Clip bound (input i, opset >= 11): `absent` when not given, else a float constant scalar.
Status clip_bound(ImportContext& cx, const NodeProto& n, int i, float absent, float* bound) {
  *bound = absent;
  if (!cx.has_input(n, i)) return Status::Ok();
  OnnxValue* v;
  VITRT_RETURN_IF_ERROR(cx.input(n, i, &v));
  const char* which = i == 1 ? "min" : "max";
  if (!v->is_const || v->pending_expand)
    return cx.unsupported_node(n, std::string("its ") + which + " is computed, not a constant");
  if (v->kind != ConstKind::kFloat || v->numel() != 1)
    return cx.unsupported_node(n, std::string("its ") + which + " is not one float value");
  if (std::isnan(v->f[0])) return cx.unsupported_node(n, std::string("its ") + which + " is NaN");
  *bound = v->f[0];
  return Status::Ok();
}

Status lower_clip(ImportContext& cx, int, const NodeProto& n) {
  const float inf = std::numeric_limits<float>::infinity();
  UnaryAttrs a{UnaryKind::kClip, -inf, inf};
  VITRT_RETURN_IF_ERROR(clip_bound(cx, n, 1, -inf, &a.alpha));
  VITRT_RETURN_IF_ERROR(clip_bound(cx, n, 2, inf, &a.beta));
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  if (a.alpha == -inf && a.beta == inf) {  // no bound: x itself (NaN too)
    cx.alias(n.output(0), *x);
    return Status::Ok();
  }
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  return emit(cx, n, OpType::kUnary, a, {t}, n.output(0));
}

// An integer exponent (Pow's T1 may be an integer type) as the float constant the IR's Pow reads; exact up to
// 2^24.
Status float_exponent(ImportContext& cx, const NodeProto& n, const OnnxValue& e, int32_t* t) {
  std::vector<float> values;
  for (const SymDim& d : e.i) {
    if (!d.is_static() || d.c > (int64_t{1} << 24) || d.c < -(int64_t{1} << 24))
      return cx.unsupported_node(n, "an integer exponent beyond ±2^24 (not exact in float32)");
    values.push_back(static_cast<float>(d.c));
  }
  std::vector<int64_t> shape = e.shape.empty() ? std::vector<int64_t>{1} : e.shape;
  for (int64_t d : shape)
    if (d < 1) return cx.unsupported_node(n, "an empty exponent");
  *t = cx.add_constant(n.output(0) + ".exponent", shape, std::move(values));
  return Status::Ok();
}

Status lower_pow(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *e;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &e));
  // A constant scalar exponent 1 or 2 keeps its exact forms (the LayerNorm pattern and the .pth route's x·x).
  if (e->is_const && e->numel() == 1 && !e->pending_expand && e->shape.size() <= 1) {
    const double p = e->kind == ConstKind::kFloat ? e->f[0] : static_cast<double>(e->i[0].c);
    const bool scalar_result = e->kind == ConstKind::kFloat || e->i[0].is_static();
    if (scalar_result && p == 1.0) {
      cx.alias(n.output(0), *x);
      return Status::Ok();
    }
    if (scalar_result && p == 2.0) {
      int32_t t;
      VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
      return emit(cx, n, OpType::kMul, NoAttrs{}, {t, t}, n.output(0));  // x² = x·x exactly
    }
  }
  int32_t base, exponent;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &base));
  if (e->is_const && e->kind == ConstKind::kInt && !e->pending_expand)
    VITRT_RETURN_IF_ERROR(float_exponent(cx, n, *e, &exponent));
  else
    VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &exponent));
  return emit(cx, n, OpType::kPow, NoAttrs{}, {base, exponent}, n.output(0));
}

// Min and Max of one input are that input; of more, a chain of the IR's two-input op (min and max are
// associative, and every step is exact).
Status lower_min_max(ImportContext& cx, int, const NodeProto& n) {
  const OpType type = n.op_type() == "Min" ? OpType::kMin : OpType::kMax;
  if (n.input_size() < 1) return cx.bad_node(n, "has no input");
  if (n.input_size() == 1) {
    OnnxValue* x;
    VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
    cx.alias(n.output(0), *x);
    return Status::Ok();
  }
  int32_t acc;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &acc));
  for (int i = 1; i < n.input_size(); ++i) {
    int32_t t;
    VITRT_RETURN_IF_ERROR(tensor_of(cx, n, i, &t));
    const bool last = i + 1 == n.input_size();
    const std::string out = last ? n.output(0) : n.output(0) + ".step" + std::to_string(i);
    OnnxValue v;
    VITRT_RETURN_IF_ERROR(cx.add_op(n, type, NoAttrs{}, {acc, t}, out, &v));
    acc = v.tensor;
    if (last) cx.set(out, std::move(v));
  }
  return Status::Ok();
}

// Mod of floats: fmod = 1 is C's fmod (the IR's Fmod); fmod = 0 Python's rule (the IR's Mod). ONNX asks for
// fmod = 1 on floats but its reference implementation computes numpy.mod for 0, and so does this.
Status lower_mod(ImportContext& cx, int, const NodeProto& n) {
  const int64_t fmod = cx.attr_int(n, "fmod", 0);
  if (fmod != 0 && fmod != 1) return cx.bad_node(n, "fmod " + std::to_string(fmod) + ", expected 0 or 1");
  int32_t a, b;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &a));
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &b));
  return emit(cx, n, fmod ? OpType::kFmod : OpType::kMod, NoAttrs{}, {a, b}, n.output(0));
}

// Swish (opset 24): x·sigmoid(alpha·x); with alpha 1, the Unary Silu that torch's SiLU also becomes,
// otherwise Mul by alpha, Sigmoid, Mul by x (ONNX's reference steps).
Status lower_swish(ImportContext& cx, int, const NodeProto& n) {
  if (cx.opset() < 24) return cx.bad_node(n, "Swish is an operator of opset 24 and later");
  const float alpha = cx.attr_float(n, "alpha", 1.0f);
  if (!std::isfinite(alpha)) return cx.bad_node(n, "alpha must be finite");
  int32_t x;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &x));
  const std::string out = n.output(0);
  if (alpha == 1.0f) return emit(cx, n, OpType::kUnary, UnaryAttrs{UnaryKind::kSilu, 0.0f, 0.0f}, {x}, out);
  const int32_t a = cx.add_constant(out + ".alpha", {1}, {alpha});
  OnnxValue v;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kMul, NoAttrs{}, {x, a}, out + ".scaled", &v));
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kUnary, UnaryAttrs{UnaryKind::kSigmoid, 0.0f, 0.0f}, {v.tensor},
                                  out + ".gate", &v));
  return emit(cx, n, OpType::kMul, NoAttrs{}, {x, v.tensor}, out);
}

// PRelu: the IR's PRelu, the slope broadcast to x's shape only (unidirectional, as ONNX asks: the output has
// x's shape); a slope that would widen x is a malformed node.
Status lower_prelu(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *xv, *sv;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &xv));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &sv));
  const std::vector<SymDim> xd = dims_of(*xv), sd = dims_of(*sv);
  bool fits = sd.size() <= xd.size();
  for (size_t i = 0; fits && i < sd.size(); ++i) {
    const SymDim& s = sd[sd.size() - 1 - i];
    fits = s == SymDim::of(1) || s == xd[xd.size() - 1 - i];
  }
  if (!fits) {
    std::string want, got;
    for (const SymDim& d : xd) want += (want.empty() ? "" : ",") + d.str();
    for (const SymDim& d : sd) got += (got.empty() ? "" : ",") + d.str();
    return cx.bad_node(n, "slope [" + got + "] does not broadcast to the input's shape [" + want + "]");
  }
  int32_t x, slope;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &x));
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &slope));
  return emit(cx, n, OpType::kPRelu, NoAttrs{}, {x, slope}, n.output(0));
}

}  // namespace

std::map<std::string, Entry> elementwise_entries() {
  return {
      {"Add", {lower_binary, {}}},
      {"Sub", {lower_binary, {}}},
      {"Mul", {lower_binary, {}}},
      {"Div", {lower_binary, {}}},
      {"Pow", {lower_pow, {}}},
      {"Min", {lower_min_max, {}}},
      {"Max", {lower_min_max, {}}},
      {"Relu", {lower_unary, {}}},
      {"Exp", {lower_unary, {}}},
      {"Neg", {lower_unary, {}}},
      {"Reciprocal", {lower_unary, {}}},
      {"Sqrt", {lower_unary, {}}},
      {"Erf", {lower_unary, {}}},
      {"Tanh", {lower_unary, {}}},
      {"Sigmoid", {lower_unary, {}}},
      {"Abs", {lower_unary, {}}},
      {"Log", {lower_unary, {}}},
      {"Floor", {lower_unary, {}}},
      {"Ceil", {lower_unary, {}}},
      {"LeakyRelu", {lower_unary, {"alpha"}}},
      {"Elu", {lower_unary, {"alpha"}}},
      {"HardSigmoid", {lower_unary, {"alpha", "beta"}}},
      {"HardSwish", {lower_unary, {}}},
      {"Softplus", {lower_unary, {}}},
      {"Clip", {lower_clip, {}}},
      {"Sin", {lower_unary, {}}},
      {"Cos", {lower_unary, {}}},
      {"Round", {lower_unary, {}}},
      {"Sign", {lower_unary, {}}},
      {"Mish", {lower_unary, {}}},
      {"Mod", {lower_mod, {"fmod"}}},
      {"Gelu", {lower_gelu, {"approximate"}}},
      {"PRelu", {lower_prelu, {}}},
      {"Swish", {lower_swish, {"alpha"}}},
      {"Selu", {lower_unary, {"alpha", "gamma"}}},
      {"Celu", {lower_unary, {"alpha"}}},
      {"ThresholdedRelu", {lower_unary, {"alpha"}}},
      {"Softsign", {lower_unary, {}}},
      {"Shrink", {lower_unary, {"lambd", "bias"}}},
      {"Tan", {lower_unary, {}}},
      {"Asin", {lower_unary, {}}},
      {"Acos", {lower_unary, {}}},
      {"Atan", {lower_unary, {}}},
      {"Sinh", {lower_unary, {}}},
      {"Cosh", {lower_unary, {}}},
      {"Asinh", {lower_unary, {}}},
      {"Acosh", {lower_unary, {}}},
      {"Atanh", {lower_unary, {}}},
  };
}

}  // namespace vitrt::convert::lowering
