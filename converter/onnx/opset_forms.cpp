// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/opset_forms.h"

#include <set>
#include <string>

namespace vitrt::convert {

Status check_opset_forms(ImportContext& cx) {
  if (cx.opset() < 18) return Status::Ok();
  // Changed at opset 18 and read by the importer in their old form only. (Pad, ScatterND, Split, ReduceMean,
  // ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp
  // changed too; lower_pad_expand.cpp, lower_scatter_nd.cpp, lower_ops.cpp and lower_reduce.cpp read their 18
  // forms, lower_resize.cpp Resize's (`axes`, `keep_aspect_ratio_policy` stretch, `antialias` 0). Ops new at
  // 18 have no lowering at all.)
  // Opsets 19-25 need no entry here: what they changed for float32 is refused by the lowerings by name (Pad's
  // `wrap` mode, Resize's `half_pixel_symmetric`, AveragePool's `dilations` attribute) or is an op with no
  // lowering (RotaryEmbedding, TensorScatter); Gelu-20, GroupNormalization-21, Attention-23,
  // RMSNormalization-23 and Swish-24 are lowered.
  static const std::set<std::string> kOldFormOnly = {"ScatterElements", "LpPool", "OptionalGetElement",
                                                     "OptionalHasElement"};
  for (int i = 0; i < cx.onnx_graph().node_size(); ++i) {
    const auto& n = cx.onnx_graph().node(i);
    if (cx.imports(i) && (n.domain().empty() || n.domain() == "ai.onnx") && kOldFormOnly.count(n.op_type()))
      return cx.unsupported_node(
          n,
          "its opset-18 definition is not supported yet (only its opset 11-17 forms are; see "
          "docs/onnx.md)");
  }
  return Status::Ok();
}

}  // namespace vitrt::convert
