// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/dropout_identity.h"

namespace vitrt::convert {

Status check_dropout_identity(ImportContext& cx, const onnx::NodeProto& n) {
  for (int k = 1; k < n.output_size(); ++k)
    if (!n.output(k).empty() && (!cx.consumers(n.output(k)).empty() || cx.is_graph_output(n.output(k))))
      return cx.unsupported_node(n, "its mask output is read");
  if (!cx.has_input(n, 2)) return Status::Ok();
  OnnxValue* training;
  VITRT_RETURN_IF_ERROR(cx.input(n, 2, &training));
  if (!training->is_const || training->pending_expand || training->numel() != 1 || training->i.empty() ||
      !training->i[0].is_static())
    return cx.unsupported_node(n, "training_mode must be a constant");
  if (training->i[0].c == 0) return Status::Ok();
  // Training mode: the identity only when the ratio (input 1, default 0.5) is a constant 0.
  if (cx.has_input(n, 1)) {
    OnnxValue* ratio;
    VITRT_RETURN_IF_ERROR(cx.input(n, 1, &ratio));
    const bool zero =
        ratio->is_const && !ratio->pending_expand && ratio->numel() == 1 &&
        (ratio->kind == ConstKind::kFloat ? ratio->f.size() == 1 && ratio->f[0] == 0.0f
                                          : ratio->i.size() == 1 && ratio->i[0] == SymDim::of(0));
    if (zero) return Status::Ok();
  }
  return cx.unsupported_node(n,
                             "training_mode is true with a ratio other than a constant 0 (it would drop "
                             "elements at random)");
}

}  // namespace vitrt::convert
