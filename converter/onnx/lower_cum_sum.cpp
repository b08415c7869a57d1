// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// CumSum (docs/onnx.md) becomes the IR's CumSum: the axis, ONNX's second input, must be one integer known at
// import (an initializer or a Constant); `exclusive` and `reverse` are 0 or 1.
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_cum_sum(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *axis;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &axis));
  if (x->rank() < 1) return cx.bad_node(n, "a scalar input has no axis to sum along");
  if (!axis->is_const)
    return cx.unsupported_node(n,
                               "the axis is computed from data, not known at import (it must be a constant)");
  if (axis->kind != ConstKind::kInt || axis->numel() != 1 || axis->shape.size() > 1)
    return cx.bad_node(n, "the axis must be one integer (an int32/int64 scalar), got " +
                              std::string(axis->kind == ConstKind::kInt ? "integers" : "floats") +
                              " of shape " + int_dims_str(axis->shape));
  if (!axis->i[0].is_static()) return cx.unsupported_node(n, "the axis depends on the batch size");
  CumSumAttrs a;
  int ax = 0;
  VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, axis->i[0].c, x->rank(), &ax));
  a.axis = ax;
  for (const char* flag : {"exclusive", "reverse"}) {
    const int64_t v = cx.attr_int(n, flag, 0);
    if (v != 0 && v != 1)
      return cx.bad_node(n, std::string(flag) + " " + std::to_string(v) + ", expected 0 or 1");
  }
  a.exclusive = cx.attr_int(n, "exclusive", 0) == 1;
  a.reverse = cx.attr_int(n, "reverse", 0) == 1;
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  return emit(cx, n, OpType::kCumSum, a, {t}, n.output(0));
}

}  // namespace

std::map<std::string, Entry> cum_sum_entries() {
  return {{"CumSum", {lower_cum_sum, {"exclusive", "reverse"}}}};
}

}  // namespace vitrt::convert::lowering
