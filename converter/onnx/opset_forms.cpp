// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/opset_forms.h"

#include <set>
#include <string>

namespace vitrt::convert {

Status check_opset_forms(ImportContext& cx) {
  if (cx.opset() < 18) return Status::Ok();
  // Changed at opset 18 and read by the importer in their old form only. (Split, ReduceMean, ReduceMax,
  // ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp changed too;
  // lower_ops.cpp and lower_reduce.cpp read their 18 forms, lower_resize.cpp Resize's (`axes`,
  // `keep_aspect_ratio_policy` stretch, `antialias` 0). Ops new at 18 have no lowering at all.)
  static const std::set<std::string> kOldFormOnly = {"Pad",    "ScatterElements",    "ScatterND",
                                                     "LpPool", "OptionalGetElement", "OptionalHasElement"};
  for (const auto& n : cx.onnx_graph().node())
    if ((n.domain().empty() || n.domain() == "ai.onnx") && kOldFormOnly.count(n.op_type()))
      return cx.unsupported_node(n,
                                 "its opset-18 definition is not supported yet (opsets 11-17 are; see "
                                 "docs/onnx.md)");
  return Status::Ok();
}

}  // namespace vitrt::convert
