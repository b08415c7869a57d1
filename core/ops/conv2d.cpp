// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Conv2d: src [B,Cin,H,W], weight [Cout,Cin/groups,kh,kw], bias [Cout] (optional), residual (optional, the
// output's shape; added before the activation) -> [B,Cout,Ho,Wo]; with channels_last src [B,H,W,Cin] ->
// [B,Ho,Wo,Cout].
#include "common/checked_math.h"
#include "ops/op_registry.h"

namespace vitrt {

bool conv_output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation,
                      int64_t* out) {
  int64_t padded = 0, span = 0;
  if (in < 1 || kernel < 1 || pad < 0 || stride < 1 || dilation < 1) return false;
  if (!checked_mul(pad, 2, &padded) || !checked_add(in, padded, &padded)) return false;
  if (!checked_mul(dilation, kernel - 1, &span) || !checked_add(span, 1, &span)) return false;
  if (padded < span) return false;
  *out = (padded - span) / stride + 1;
  return true;
}

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
  // In int64 with checks: `2 * pad` in int32 overflowed for a crafted padding and produced a plausible output
  // size that ignored the input.
  int64_t ho = 0, wo = 0;
  if (!conv_output_size(x[2], w[2], a.pad_h, a.stride_h, a.dilation_h, &ho) ||
      !conv_output_size(x[3], w[3], a.pad_w, a.stride_w, a.dilation_w, &wo))
    return bad_model("Conv2d: kernel " + w.str() + " (stride " + std::to_string(a.stride_h) + "x" +
                     std::to_string(a.stride_w) + ", padding " + std::to_string(a.pad_h) + "x" +
                     std::to_string(a.pad_w) + ", dilation " + std::to_string(a.dilation_h) + "x" +
                     std::to_string(a.dilation_w) + ") does not fit input " + x.str());
  dst[0] = a.channels_last ? Shape{x[0], ho, wo, w[0]} : Shape{x[0], w[0], ho, wo};
  if (num_src > 3 && src[3] && *src[3] != dst[0])
    return bad_model("Conv2d: residual must have the output's shape " + dst[0].str() + ", got " +
                     src[3]->str());
  return Status::Ok();
}

}  // namespace vitrt
