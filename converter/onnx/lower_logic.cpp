// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Comparisons, logical ops and Where on activations (docs/onnx.md). vitrt computes in float32, so an ONNX
// bool is a float 0 or 1: Equal, Less, Greater, LessOrEqual, GreaterOrEqual become the IR's Compare; on 0/1
// values Not(x) is x == 0, And is a product, Or a maximum and Xor x != y, each exact. Where(cond, a, b) picks
// a where cond is non-zero. A bool value stays unsupported as a graph output.
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;
using TP = onnx::TensorProto;

// The IR tensor of input i of a node reading booleans: a bool constant becomes float 0/1 (an activation is
// already 0/1, made by an op of this file); anything else as tensor_of.
Status bool_or_float_tensor(ImportContext& cx, const NodeProto& n, int i, int32_t* t) {
  OnnxValue* v;
  VITRT_RETURN_IF_ERROR(cx.input(n, i, &v));
  if (!v->is_const || v->pending_expand || v->kind != ConstKind::kInt || v->onnx_type != TP::BOOL)
    return tensor_of(cx, n, i, t);
  if (v->ir_constant >= 0) {
    *t = v->ir_constant;
    return Status::Ok();
  }
  std::vector<int64_t> shape = v->shape.empty() ? std::vector<int64_t>{1} : v->shape;
  for (int64_t d : shape)
    if (d < 1) return cx.unsupported_node(n, "input '" + n.input(i) + "' is an empty bool constant");
  std::vector<float> values;
  values.reserve(v->i.size());
  for (const SymDim& d : v->i) values.push_back(d.c != 0 ? 1.0f : 0.0f);
  v->ir_constant = cx.add_constant(n.input(i), shape, std::move(values));
  *t = v->ir_constant;
  return Status::Ok();
}

Status emit_bool(ImportContext& cx, const NodeProto& n, OpType type, OpAttrs attrs,
                 std::vector<int32_t> inputs) {
  OnnxValue out;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, type, std::move(attrs), std::move(inputs), n.output(0), &out));
  out.boolean = true;
  cx.set(n.output(0), std::move(out));
  return Status::Ok();
}

Status lower_compare(ImportContext& cx, int, const NodeProto& n) {
  static const std::map<std::string, CompareKind> kinds = {{"Equal", CompareKind::kEqual},
                                                           {"Less", CompareKind::kLess},
                                                           {"Greater", CompareKind::kGreater},
                                                           {"LessOrEqual", CompareKind::kLessOrEqual},
                                                           {"GreaterOrEqual", CompareKind::kGreaterOrEqual}};
  int32_t a, b;
  VITRT_RETURN_IF_ERROR(bool_or_float_tensor(cx, n, 0, &a));
  VITRT_RETURN_IF_ERROR(bool_or_float_tensor(cx, n, 1, &b));
  return emit_bool(cx, n, OpType::kCompare, CompareAttrs{kinds.at(n.op_type())}, {a, b});
}

Status lower_logical(ImportContext& cx, int, const NodeProto& n) {
  const std::string& op = n.op_type();
  int32_t a;
  VITRT_RETURN_IF_ERROR(bool_or_float_tensor(cx, n, 0, &a));
  if (op == "Not") {
    const int32_t zero = cx.add_constant(n.output(0) + ".zero", {1}, {0.0f});
    return emit_bool(cx, n, OpType::kCompare, CompareAttrs{CompareKind::kEqual}, {a, zero});
  }
  int32_t b;
  VITRT_RETURN_IF_ERROR(bool_or_float_tensor(cx, n, 1, &b));
  if (op == "And") return emit_bool(cx, n, OpType::kMul, NoAttrs{}, {a, b});
  if (op == "Or") return emit_bool(cx, n, OpType::kMax, NoAttrs{}, {a, b});
  return emit_bool(cx, n, OpType::kCompare, CompareAttrs{CompareKind::kNotEqual}, {a, b});  // Xor
}

bool is_bool(const OnnxValue& v) {
  return v.is_const ? v.kind == ConstKind::kInt && v.onnx_type == TP::BOOL : v.boolean;
}

Status lower_where(ImportContext& cx, int, const NodeProto& n) {
  int32_t c, a, b;
  VITRT_RETURN_IF_ERROR(bool_or_float_tensor(cx, n, 0, &c));
  VITRT_RETURN_IF_ERROR(bool_or_float_tensor(cx, n, 1, &a));
  VITRT_RETURN_IF_ERROR(bool_or_float_tensor(cx, n, 2, &b));
  OnnxValue *x, *y;
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 2, &y));
  const bool boolean = is_bool(*x) && is_bool(*y);  // a choice between bools is a bool
  OnnxValue out;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kWhere, NoAttrs{}, {c, a, b}, n.output(0), &out));
  out.boolean = boolean;
  cx.set(n.output(0), std::move(out));
  return Status::Ok();
}

}  // namespace

std::map<std::string, Entry> logic_entries() {
  return {
      {"Equal", {lower_compare, {}}},
      {"Less", {lower_compare, {}}},
      {"Greater", {lower_compare, {}}},
      {"LessOrEqual", {lower_compare, {}}},
      {"GreaterOrEqual", {lower_compare, {}}},
      {"Not", {lower_logical, {}}},
      {"And", {lower_logical, {}}},
      {"Or", {lower_logical, {}}},
      {"Xor", {lower_logical, {}}},
      {"Where", {lower_where, {}}},
  };
}

}  // namespace vitrt::convert::lowering
