// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The ONNX reductions: ReduceMean, ReduceSum and ReduceMax become the IR ops of those names, the others
// (ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp) the IR's Reduce
// op with their kind (docs/onnx.md, the lowering table). The axes are an attribute up to opset 17 and an
// optional constant input from opset 18 (ReduceSum: from 13), which also brings noop_with_empty_axes; no axes
// means every axis unless that flag is set.
#include <map>
#include <string>

#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

// The opset from which the op's axes are an input (and noop_with_empty_axes exists).
int64_t axes_input_opset(const std::string& op) {
  return op == "ReduceSum" ? 13 : 18;
}

Status lower_reduce(ImportContext& cx, int, const NodeProto& n) {
  static const std::map<std::string, ReduceKind> kinds = {{"ReduceMin", ReduceKind::kMin},
                                                          {"ReduceProd", ReduceKind::kProd},
                                                          {"ReduceL1", ReduceKind::kL1},
                                                          {"ReduceL2", ReduceKind::kL2},
                                                          {"ReduceSumSquare", ReduceKind::kSumSquare},
                                                          {"ReduceLogSum", ReduceKind::kLogSum},
                                                          {"ReduceLogSumExp", ReduceKind::kLogSumExp}};
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  const std::string& op = n.op_type();
  const int64_t since = axes_input_opset(op);
  const std::string since_str = "opset " + std::to_string(since);
  std::vector<int64_t> axes;
  bool noop_when_empty = false;
  if (cx.opset() >= since) {
    if (cx.attr(n, "axes"))
      return cx.bad_node(n, "'axes' is an input since " + since_str + ", not an attribute");
    if (cx.has_input(n, 1)) {
      OnnxValue* a;
      VITRT_RETURN_IF_ERROR(cx.input(n, 1, &a));
      VITRT_RETURN_IF_ERROR(const_ints(cx, n, *a, "axes", &axes));
    }
    noop_when_empty = cx.attr_int(n, "noop_with_empty_axes", 0) != 0;
  } else {
    if (n.input_size() > 1)
      return cx.bad_node(n, "takes one input before " + since_str + " (its axes are an attribute)");
    if (cx.attr(n, "noop_with_empty_axes"))
      return cx.bad_node(n, "has no attribute 'noop_with_empty_axes' before " + since_str);
    axes = cx.attr_ints(n, "axes");
  }
  if (axes.empty()) {
    if (noop_when_empty) {
      cx.alias(n.output(0), *x);
      return Status::Ok();
    }
    for (int d = 0; d < x->rank(); ++d) axes.push_back(d);
  }
  std::vector<int32_t> ir_axes;
  for (int64_t v : axes) {
    int ax;
    VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, v, x->rank(), &ax));
    for (int32_t seen : ir_axes)
      if (seen == ax) return cx.bad_node(n, "axis " + std::to_string(v) + " is listed twice");
    ir_axes.push_back(ax);
  }
  const bool keepdims = cx.attr_int(n, "keepdims", 1) != 0;
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  const auto kind = kinds.find(op);
  if (kind != kinds.end())
    return emit(cx, n, OpType::kReduce, ReduceAttrs{kind->second, ir_axes, keepdims}, {t}, n.output(0));
  const OpType type = op == "ReduceMean"  ? OpType::kReduceMean
                      : op == "ReduceSum" ? OpType::kReduceSum
                                          : OpType::kReduceMax;
  return emit(cx, n, type, ReduceMeanAttrs{ir_axes, keepdims}, {t}, n.output(0));
}

}  // namespace

std::map<std::string, Entry> reduction_entries() {
  std::map<std::string, Entry> entries;
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
    entries[op] = Entry{lower_reduce, {"axes", "keepdims", "noop_with_empty_axes"}};
  return entries;
}

}  // namespace vitrt::convert::lowering
