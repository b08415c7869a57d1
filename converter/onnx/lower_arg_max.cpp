// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ArgMax, ArgMin (opsets 11-25; docs/onnx.md) -> the IR's ArgMax of that kind (core/ir/op_attrs.h,
// ArgMaxAttrs). ONNX's result is int64; vitrt computes in float32, so the index is a float32 value (exact:
// the IR refuses an axis longer than 2^24), and a graph output computed by ArgMax holds float indices.
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_arg_max(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  if (x->rank() < 1) return cx.bad_node(n, "the input is a scalar (an index needs an axis)");
  int ax = 0;
  VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, cx.attr_int(n, "axis", 0), x->rank(), &ax));
  const int64_t keepdims = cx.attr_int(n, "keepdims", 1), last = cx.attr_int(n, "select_last_index", 0);
  if ((keepdims != 0 && keepdims != 1) || (last != 0 && last != 1))
    return cx.bad_node(n, "keepdims and select_last_index must be 0 or 1");
  if (last == 1 && cx.opset() < 12) return cx.bad_node(n, "select_last_index needs opset 12 or later");
  const ArgMaxAttrs a{n.op_type() == "ArgMin" ? ArgKind::kMin : ArgKind::kMax, ax, keepdims == 1, last == 1};
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  return emit(cx, n, OpType::kArgMax, a, {t}, n.output(0));
}

}  // namespace

std::map<std::string, Entry> arg_max_entries() {
  return {{"ArgMax", {lower_arg_max, {"axis", "keepdims", "select_last_index"}}},
          {"ArgMin", {lower_arg_max, {"axis", "keepdims", "select_last_index"}}}};
}

}  // namespace vitrt::convert::lowering
