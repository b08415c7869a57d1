// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Conv2d: src [B,Cin,H,W], weight [Cout,Cin/groups,kh,kw], bias [Cout] (optional) -> [B,Cout,Ho,Wo]; with
// channels_last src [B,H,W,Cin] -> [B,Ho,Wo,Cout].
#include "ops/op_registry.h"

namespace vitrt {

Status infer_conv2d(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<Conv2dAttrs>(node.attrs);
  const Shape& given = *src[0];
  const Shape& w = *src[1];
  if (given.rank != 4)
    return bad_model(std::string("Conv2d: input must be ") + (a.channels_last ? "[B,H,W,C]" : "[B,C,H,W]") +
                     ", got " + given.str());
  const Shape x = a.channels_last ? Shape{given[0], given[3], given[1], given[2]} : given;  // as NCHW
  if (w.rank != 4) return bad_model("Conv2d: weight must be [Cout,Cin/groups,kh,kw], got " + w.str());
  if (a.groups < 1 || a.stride_h < 1 || a.stride_w < 1 || a.dilation_h < 1 || a.dilation_w < 1 ||
      a.pad_h < 0 || a.pad_w < 0)
    return bad_model("Conv2d: invalid groups/stride/dilation/padding");
  if (x[1] % a.groups != 0 || w[0] % a.groups != 0 || w[1] * a.groups != x[1])
    return bad_model("Conv2d: input channels " + std::to_string(x[1]) + " and weight " + w.str() +
                     " do not agree for groups=" + std::to_string(a.groups));
  if (num_src > 2 && src[2] && (src[2]->rank != 1 || (*src[2])[0] != w[0]))
    return bad_model("Conv2d: bias must be [" + std::to_string(w[0]) + "], got " + src[2]->str());
  const int64_t eff_h = a.dilation_h * (w[2] - 1) + 1, eff_w = a.dilation_w * (w[3] - 1) + 1;
  const int64_t ho = (x[2] + 2 * a.pad_h - eff_h) / a.stride_h + 1;
  const int64_t wo = (x[3] + 2 * a.pad_w - eff_w) / a.stride_w + 1;
  if (x[2] + 2 * a.pad_h < eff_h || x[3] + 2 * a.pad_w < eff_w || ho < 1 || wo < 1)
    return bad_model("Conv2d: kernel " + w.str() + " does not fit input " + x.str());
  dst[0] = a.channels_last ? Shape{x[0], ho, wo, w[0]} : Shape{x[0], w[0], ho, wo};
  return Status::Ok();
}

}  // namespace vitrt
