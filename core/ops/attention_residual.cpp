// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// AttentionResidual (LaViT): scores [B,h1,N1,N'] over an height x width query grid, depthwise conv [h1,1,k,k]
// stride k + bias [h1], pointwise conv [h2,h1,1,1] + bias [h2], gamma [h2]  ->  [B,h2,N2,N'].
#include "ops/op_registry.h"

namespace vitrt {

Status infer_attention_residual(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<AttentionResidualAttrs>(node.attrs);
  const Shape& s = *src[0];
  if (s.rank != 4) return bad_model("AttentionResidual: scores must be [B,h,N,N'], got " + s.str());
  if (a.height < 1 || a.width < 1 || static_cast<int64_t>(a.height) * a.width != s[2])
    return bad_model("AttentionResidual: grid " + std::to_string(a.height) + "x" + std::to_string(a.width) +
                     " does not hold " + std::to_string(s[2]) + " query positions");
  const int64_t h1 = s[1];
  const Shape& dw = *src[1];
  if (dw.rank != 4 || dw[0] != h1 || dw[1] != 1 || dw[2] != dw[3] || dw[2] < 1)
    return bad_model("AttentionResidual: depthwise weight must be [" + std::to_string(h1) + ",1,k,k], got " + dw.str());
  if (*src[2] != Shape{h1}) return bad_model("AttentionResidual: depthwise bias must be [" + std::to_string(h1) + "]");
  const Shape& pw = *src[3];
  if (pw.rank != 4 || pw[1] != h1 || pw[2] != 1 || pw[3] != 1)
    return bad_model("AttentionResidual: pointwise weight must be [h2," + std::to_string(h1) + ",1,1], got " + pw.str());
  const int64_t h2 = pw[0];
  if (*src[4] != Shape{h2} || *src[5] != Shape{h2}) return bad_model("AttentionResidual: pointwise bias and gamma must be [" + std::to_string(h2) + "]");
  const int64_t k = dw[2];
  if (a.height / k < 1 || a.width / k < 1) return bad_model("AttentionResidual: kernel larger than the grid");
  dst[0] = Shape{s[0], h2, (a.height / k) * (a.width / k), s[3]};
  return Status::Ok();
}

}  // namespace vitrt
