// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Trilu (docs/onnx.md) becomes the IR's Trilu: `upper` (0 or 1) and k, ONNX's optional second input, which
// must be one integer known at import (an initializer or a Constant), as the IR holds it as an attribute.
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_trilu(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  if (x->rank() < 2)
    return cx.bad_node(n, "input of rank " + std::to_string(x->rank()) + ", expected rank 2 or more");
  TriluAttrs a;
  const int64_t upper = cx.attr_int(n, "upper", 1);
  if (upper != 0 && upper != 1) return cx.bad_node(n, "upper " + std::to_string(upper) + ", expected 0 or 1");
  a.upper = upper == 1;
  if (cx.has_input(n, 1)) {
    OnnxValue* k;
    VITRT_RETURN_IF_ERROR(cx.input(n, 1, &k));
    if (!k->is_const)
      return cx.unsupported_node(n, "k is computed from data, not known at import (it must be a constant)");
    if (k->kind != ConstKind::kInt || k->numel() != 1)
      return cx.bad_node(n, "k must be one integer (an int64 scalar), got " +
                                std::string(k->kind == ConstKind::kInt ? "integers" : "floats") +
                                " of shape " + int_dims_str(k->shape));
    if (!k->i[0].is_static()) return cx.unsupported_node(n, "k depends on the batch size");
    a.k = k->i[0].c;
  }
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  return emit(cx, n, OpType::kTrilu, a, {t}, n.output(0));
}

}  // namespace

std::map<std::string, Entry> trilu_entries() {
  return {{"Trilu", {lower_trilu, {"upper"}}}};
}

}  // namespace vitrt::convert::lowering
