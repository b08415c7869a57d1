// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/patterns.h"

#include <cmath>

namespace vitrt::convert {
namespace {

using NodeProto = onnx::NodeProto;

// Input i of a node, "" when it has fewer (a hostile node may have any number).
const std::string& arg(const NodeProto& n, int i) {
  static const std::string none;
  return i >= 0 && i < n.input_size() ? n.input(i) : none;
}

// Output 0 of a node, "" when it has none.
const std::string& out0(const NodeProto& n) {
  static const std::string none;
  return n.output_size() > 0 ? n.output(0) : none;
}

struct Matcher {
  ImportContext& cx;
  std::vector<int> nodes;  // matched so far

  const NodeProto& node(int i) const { return cx.onnx_graph().node(i); }

  // The single reader of `value` when it is an `op` node (not yet consumed); -1 otherwise.
  int next(const std::string& value, const char* op) {
    const int c = cx.single_consumer(value);
    if (c < 0 || cx.consumed(c) || node(c).op_type() != op) return -1;
    nodes.push_back(c);
    return c;
  }
  // The node writing `value` when it is an `op` node (not yet consumed) and `value` has no other reader; -1
  // otherwise.
  int prev(const std::string& value, const char* op) {
    const int p = cx.producer(value);
    if (p < 0 || cx.consumed(p) || node(p).op_type() != op || cx.single_consumer(value) < 0) return -1;
    nodes.push_back(p);
    return p;
  }
  // For a binary node reading `value`: the other operand's name ("" when it reads `value` twice or is not
  // binary).
  std::string other(int n, const std::string& value) const {
    const NodeProto& p = node(n);
    if (p.input_size() != 2) return "";
    if (arg(p, 0) == value && arg(p, 1) != value) return arg(p, 1);
    if (arg(p, 1) == value && arg(p, 0) != value) return arg(p, 0);
    return "";
  }
  // Whether `name` is a float constant holding one value close to `want` (relative 1e-5).
  bool scalar(const std::string& name, double want, float* got = nullptr) {
    const OnnxValue* v = cx.find(name);
    if (!v || !v->is_const || v->numel() != 1) return false;
    const double x = v->kind == ConstKind::kFloat ? v->f[0] : static_cast<double>(v->i[0].c);
    if (got) *got = static_cast<float>(x);
    return want == 0 ? true : std::fabs(x - want) <= 1e-5 * std::fabs(want);
  }
  // A [C] (or [1,..,1,C]) float constant over the last axis of size c.
  bool channel_vector(const std::string& name, int64_t c) {
    const OnnxValue* v = cx.find(name);
    if (!v || !v->is_const || v->kind != ConstKind::kFloat || v->pending_expand || v->shape.empty() ||
        v->shape.back() != c || v->numel() != c)
      return false;
    return true;
  }
  bool last_axis_mean(int n, int rank) {
    const NodeProto& p = node(n);
    if (cx.attr_int(p, "keepdims", 1) != 1) return false;
    std::vector<int64_t> axes = cx.attr_ints(p, "axes");
    if (!cx.attr(p, "axes") && p.input_size() > 1 && !arg(p, 1).empty()) {
      const OnnxValue* a = cx.find(arg(p, 1));
      if (!a || !a->is_const || a->i.size() != 1 || !a->i[0].is_static()) return false;
      axes = {a->i[0].c};
    }
    return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
  }
  void consume_all() {
    for (int n : nodes) cx.consume(n);
  }
};

// The normalised value `x` of a LayerNorm, i.e. the Sub node's output d = x - mean(x) and its two readers.
Status match_layer_norm(ImportContext& cx, int index, bool* matched) {
  Matcher m{cx, {index}};
  const NodeProto& root = cx.onnx_graph().node(index);
  if (root.op_type() != "ReduceMean" || root.input_size() < 1) return Status::Ok();
  const std::string x = arg(root, 0);
  OnnxValue* xv = cx.find(x);
  if (!xv || xv->is_const || xv->rank() < 1 || !xv->dims.back().is_static() ||
      !m.last_axis_mean(index, xv->rank()))
    return Status::Ok();
  const int64_t c = xv->dims.back().c;
  const int sub = m.next(out0(root), "Sub");
  if (sub < 0 || arg(m.node(sub), 0) != x || arg(m.node(sub), 1) != out0(root)) return Status::Ok();
  const std::string d = out0(m.node(sub));
  const auto& readers = cx.consumers(d);
  if (readers.size() != 2 || cx.is_graph_output(d)) return Status::Ok();
  int sq = -1, div = -1;
  for (int r : readers) {
    const NodeProto& p = m.node(r);
    if (cx.consumed(r)) return Status::Ok();
    if (p.op_type() == "Pow" && arg(p, 0) == d && m.scalar(arg(p, 1), 2.0))
      sq = r;
    else if (p.op_type() == "Mul" && p.input_size() == 2 && arg(p, 0) == d && arg(p, 1) == d)
      sq = r;
    else if (p.op_type() == "Div" && arg(p, 0) == d)
      div = r;
  }
  if (sq < 0 || div < 0) return Status::Ok();
  m.nodes.push_back(sq);
  const int var = m.next(out0(m.node(sq)), "ReduceMean");
  if (var < 0 || !m.last_axis_mean(var, xv->rank())) return Status::Ok();
  const int add = m.next(out0(m.node(var)), "Add");
  float eps = 0;
  if (add < 0 || !m.scalar(m.other(add, out0(m.node(var))), 0.0, &eps) || !(eps >= 0)) return Status::Ok();
  const int sqrt = m.next(out0(m.node(add)), "Sqrt");
  if (sqrt < 0) return Status::Ok();
  const int div2 = m.next(out0(m.node(sqrt)), "Div");
  if (div2 != div || arg(m.node(div), 1) != out0(m.node(sqrt))) return Status::Ok();
  std::string out = out0(m.node(div));
  std::string gamma, beta;
  const size_t before_affine = m.nodes.size();
  const int mul = m.next(out, "Mul");
  if (mul >= 0 && m.channel_vector(m.other(mul, out), c)) {
    gamma = m.other(mul, out);
    out = out0(m.node(mul));
    const int badd = m.next(out, "Add");
    if (badd >= 0 && m.channel_vector(m.other(badd, out), c)) {
      beta = m.other(badd, out);
      out = out0(m.node(badd));
    } else if (badd >= 0) {
      m.nodes.pop_back();
    }
  } else if (mul >= 0) {
    m.nodes.resize(before_affine);
  }
  if (out.empty()) return Status::Ok();
  int32_t xt, gt = kAbsent, bt = kAbsent;
  VITRT_RETURN_IF_ERROR(cx.ir_tensor(xv, x, &xt));
  if (!gamma.empty()) VITRT_RETURN_IF_ERROR(cx.ir_tensor(cx.find(gamma), gamma, &gt));
  if (!beta.empty()) {
    // IR LayerNorm takes beta only as [C]; a [1,..,C] constant is reshaped by value.
    OnnxValue* bv = cx.find(beta);
    VITRT_RETURN_IF_ERROR(cx.ir_tensor(bv, beta, &bt));
  }
  if (gt != kAbsent && cx.ir().tensors[gt].shape.rank != 1)
    gt = cx.add_constant(gamma + ".vector", {c}, cx.find(gamma)->f);
  if (bt != kAbsent && cx.ir().tensors[bt].shape.rank != 1)
    bt = cx.add_constant(beta + ".vector", {c}, cx.find(beta)->f);
  OnnxValue v;
  VITRT_RETURN_IF_ERROR(cx.add_op(root, OpType::kLayerNorm, LayerNormAttrs{eps}, {xt, gt, bt}, out, &v));
  cx.set(out, std::move(v));
  m.consume_all();
  *matched = true;
  return Status::Ok();
}

Status emit_gelu(ImportContext& cx, Matcher& m, const NodeProto& root, const std::string& x,
                 GeluApproximation approx, const std::string& out, bool* matched) {
  OnnxValue* xv = cx.find(x);
  if (!xv || xv->is_const || out.empty()) return Status::Ok();
  int32_t xt;
  VITRT_RETURN_IF_ERROR(cx.ir_tensor(xv, x, &xt));
  OnnxValue v;
  VITRT_RETURN_IF_ERROR(cx.add_op(root, OpType::kGelu, GeluAttrs{approx}, {xt}, out, &v));
  cx.set(out, std::move(v));
  m.consume_all();
  *matched = true;
  return Status::Ok();
}

// x·(1 + erf(x/√2))·0.5, as torch exports nn.GELU(): Div(x, √2) | Mul(x, 1/√2) -> Erf -> Add 1 -> Mul x ->
// Mul 0.5; or, as the dynamo exporter writes it below opset 20, Add 1 -> Mul 0.5 -> Mul x (the same bits: the
// halving is exact in either place).
Status match_gelu_erf(ImportContext& cx, int index, bool* matched) {
  Matcher m{cx, {index}};
  const NodeProto& root = cx.onnx_graph().node(index);
  if ((root.op_type() != "Div" && root.op_type() != "Mul") || root.input_size() != 2) return Status::Ok();
  const std::string x = arg(root, 0);
  const bool div = root.op_type() == "Div";
  if (!m.scalar(arg(root, 1), div ? std::sqrt(2.0) : std::sqrt(0.5))) return Status::Ok();
  const int erf = m.next(out0(root), "Erf");
  if (erf < 0) return Status::Ok();
  const int add = m.next(out0(m.node(erf)), "Add");
  if (add < 0 || !m.scalar(m.other(add, out0(m.node(erf))), 1.0)) return Status::Ok();
  const int mul = m.next(out0(m.node(add)), "Mul");
  if (mul < 0) return Status::Ok();
  const std::string factor = m.other(mul, out0(m.node(add)));
  const bool half_first = factor != x;
  if (half_first && !m.scalar(factor, 0.5)) return Status::Ok();
  const int last = m.next(out0(m.node(mul)), "Mul");
  if (last < 0 ||
      (half_first ? m.other(last, out0(m.node(mul))) != x : !m.scalar(m.other(last, out0(m.node(mul))), 0.5)))
    return Status::Ok();
  return emit_gelu(cx, m, root, x, GeluApproximation::kErf, out0(m.node(last)), matched);
}

// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), as torch exports nn.GELU(approximate='tanh'):
// Mul(x,x) -> Mul x -> Mul 0.044715 -> Add x -> Mul √(2/π) -> Tanh -> Add 1 -> Mul x -> Mul 0.5
// (x³ may also be Pow(x, 3)).
Status match_gelu_tanh(ImportContext& cx, int index, bool* matched) {
  Matcher m{cx, {index}};
  const NodeProto& root = cx.onnx_graph().node(index);
  std::string x, cube;
  if (root.op_type() == "Mul" && root.input_size() == 2 && arg(root, 0) == arg(root, 1)) {
    x = arg(root, 0);
    const int c3 = m.next(out0(root), "Mul");
    if (c3 < 0 || m.other(c3, out0(root)) != x) return Status::Ok();
    cube = out0(m.node(c3));
  } else if (root.op_type() == "Pow" && root.input_size() == 2 && m.scalar(arg(root, 1), 3.0)) {
    x = arg(root, 0);
    cube = out0(root);
  } else {
    return Status::Ok();
  }
  const int k = m.next(cube, "Mul");
  if (k < 0 || !m.scalar(m.other(k, cube), 0.044715)) return Status::Ok();
  const int inner = m.next(out0(m.node(k)), "Add");
  if (inner < 0 || m.other(inner, out0(m.node(k))) != x) return Status::Ok();
  const int scale = m.next(out0(m.node(inner)), "Mul");
  if (scale < 0 || !m.scalar(m.other(scale, out0(m.node(inner))), std::sqrt(2.0 / M_PI))) return Status::Ok();
  const int tanh = m.next(out0(m.node(scale)), "Tanh");
  if (tanh < 0) return Status::Ok();
  const int one = m.next(out0(m.node(tanh)), "Add");
  if (one < 0 || !m.scalar(m.other(one, out0(m.node(tanh))), 1.0)) return Status::Ok();
  const int mx = m.next(out0(m.node(one)), "Mul");
  if (mx < 0 || m.other(mx, out0(m.node(one))) != x) return Status::Ok();
  const int half = m.next(out0(m.node(mx)), "Mul");
  if (half < 0 || !m.scalar(m.other(half, out0(m.node(mx))), 0.5)) return Status::Ok();
  return emit_gelu(cx, m, root, x, GeluApproximation::kTanh, out0(m.node(half)), matched);
}

// The same GELU written (0.5·x)·(1 + tanh(√(2/π)·(x + 0.044715·x³))), as SOFT's Approx_GeLU computes it
// (tools/reference/vitrt_reference/soft.py): rooted at Mul(x, 0.5), whose product with (1 + tanh(..)) ends
// it; the rest is found from there backwards. (0.5·x)·y and (x·y)·0.5 are the same float32 value (scaling by
// 0.5 is exact above the subnormal range), so this is the tanh form above.
Status match_gelu_tanh_half_first(ImportContext& cx, int index, bool* matched) {
  Matcher m{cx, {index}};
  const NodeProto& root = cx.onnx_graph().node(index);
  if (root.op_type() != "Mul" || root.input_size() != 2) return Status::Ok();
  std::string x;
  for (int side = 0; side < 2 && x.empty(); ++side)
    if (m.scalar(arg(root, 1 - side), 0.5)) x = arg(root, side);
  const OnnxValue* xv = x.empty() ? nullptr : cx.find(x);
  if (!xv || xv->is_const) return Status::Ok();
  const int out = m.next(out0(root), "Mul");
  if (out < 0) return Status::Ok();
  const std::string onep = m.other(out, out0(root));
  const int one = m.prev(onep, "Add");
  if (one < 0) return Status::Ok();
  std::string tanh_out;
  for (int side = 0; side < 2 && tanh_out.empty(); ++side)
    if (m.scalar(arg(m.node(one), 1 - side), 1.0)) tanh_out = arg(m.node(one), side);
  const int tanh = tanh_out.empty() ? -1 : m.prev(tanh_out, "Tanh");
  if (tanh < 0) return Status::Ok();
  const int scale = m.prev(arg(m.node(tanh), 0), "Mul");
  if (scale < 0) return Status::Ok();
  std::string inner_out;
  for (int side = 0; side < 2 && inner_out.empty(); ++side)
    if (m.scalar(arg(m.node(scale), 1 - side), std::sqrt(2.0 / M_PI))) inner_out = arg(m.node(scale), side);
  const int inner = inner_out.empty() ? -1 : m.prev(inner_out, "Add");
  if (inner < 0) return Status::Ok();
  const std::string k_out = m.other(inner, x);
  const int k = k_out.empty() ? -1 : m.prev(k_out, "Mul");
  if (k < 0) return Status::Ok();
  std::string cube;
  for (int side = 0; side < 2 && cube.empty(); ++side)
    if (m.scalar(arg(m.node(k), 1 - side), 0.044715)) cube = arg(m.node(k), side);
  if (cube.empty()) return Status::Ok();
  const int pow = cx.producer(cube);
  if (pow >= 0 && m.node(pow).op_type() == "Pow") {
    if (m.prev(cube, "Pow") < 0 || arg(m.node(pow), 0) != x || !m.scalar(arg(m.node(pow), 1), 3.0))
      return Status::Ok();
  } else {
    const int c3 = m.prev(cube, "Mul");  // (x·x)·x
    if (c3 < 0) return Status::Ok();
    const std::string sq = m.other(c3, x);
    const int c2 = sq.empty() ? -1 : m.prev(sq, "Mul");
    if (c2 < 0 || arg(m.node(c2), 0) != x || arg(m.node(c2), 1) != x) return Status::Ok();
  }
  return emit_gelu(cx, m, root, x, GeluApproximation::kTanh, out0(m.node(out)), matched);
}

// x·sigmoid(x), as torch exports nn.SiLU() (ONNX has no SiLU op): Sigmoid(x) -> Mul x.
Status match_silu(ImportContext& cx, int index, bool* matched) {
  Matcher m{cx, {index}};
  const NodeProto& root = cx.onnx_graph().node(index);
  if (root.op_type() != "Sigmoid" || root.input_size() != 1 || root.attribute_size() != 0)
    return Status::Ok();
  const std::string x = arg(root, 0);
  const int mul = m.next(out0(root), "Mul");
  if (mul < 0 || m.other(mul, out0(root)) != x) return Status::Ok();
  const std::string out = out0(m.node(mul));
  OnnxValue* xv = cx.find(x);
  if (!xv || xv->is_const || out.empty()) return Status::Ok();
  int32_t xt;
  VITRT_RETURN_IF_ERROR(cx.ir_tensor(xv, x, &xt));
  OnnxValue v;
  VITRT_RETURN_IF_ERROR(
      cx.add_op(root, OpType::kUnary, UnaryAttrs{UnaryKind::kSilu, 0.0f, 0.0f}, {xt}, out, &v));
  cx.set(out, std::move(v));
  m.consume_all();
  *matched = true;
  return Status::Ok();
}

}  // namespace

Status match_patterns(ImportContext& cx, int index, bool* matched) {
  *matched = false;
  if (cx.onnx_graph().node(index).output_size() < 1) return Status::Ok();
  VITRT_RETURN_IF_ERROR(match_layer_norm(cx, index, matched));
  if (!*matched) VITRT_RETURN_IF_ERROR(match_gelu_erf(cx, index, matched));
  if (!*matched) VITRT_RETURN_IF_ERROR(match_gelu_tanh(cx, index, matched));
  if (!*matched) VITRT_RETURN_IF_ERROR(match_gelu_tanh_half_first(cx, index, matched));
  if (!*matched) VITRT_RETURN_IF_ERROR(match_silu(cx, index, matched));
  return Status::Ok();
}

}  // namespace vitrt::convert
