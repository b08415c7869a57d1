// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// AdaptiveAvgPool2d: src [B,C,H,W] -> [B,C,out_h,out_w]; bin i covers [floor(i*H/out), ceil((i+1)*H/out)).
#include "ops/op_registry.h"

namespace vitrt {

Status infer_adaptive_avg_pool2d(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<AdaptiveAvgPool2dAttrs>(node.attrs);
  const Shape& x = *src[0];
  if (x.rank != 4) return bad_model("AdaptiveAvgPool2d: input must be [B,C,H,W], got " + x.str());
  if (a.out_h < 1 || a.out_w < 1) return bad_model("AdaptiveAvgPool2d: output size must be positive");
  dst[0] = Shape{x[0], x[1], a.out_h, a.out_w};
  return Status::Ok();
}

}  // namespace vitrt
