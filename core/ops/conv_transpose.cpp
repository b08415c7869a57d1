// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ConvTranspose (ONNX ConvTranspose, PyTorch conv_transpose2d): src [B,Cin,H,W], weight
// [Cin,Cout/groups,kh,kw], bias [Cout] (optional) -> [B,Cout,Ho,Wo] (core/ir/op_attrs.h,
// ConvTransposeAttrs). Every size comes from a file, so the output size is computed in checked int64.
#include <string>

#include "common/checked_math.h"
#include "ops/op_registry.h"

namespace vitrt {

bool conv_transpose_output_size(int64_t in, int64_t kernel, int64_t pad_begin, int64_t pad_end,
                                int64_t stride, int64_t dilation, int64_t output_padding, int64_t* out) {
  if (in < 1 || kernel < 1 || pad_begin < 0 || pad_end < 0 || stride < 1 || dilation < 1 ||
      output_padding < 0)
    return false;
  int64_t n = 0, span = 0;
  if (!checked_mul(in - 1, stride, &n) || !checked_mul(kernel - 1, dilation, &span) ||
      !checked_add(n, span, &n) || !checked_add(n, 1, &n) || !checked_add(n, output_padding, &n) ||
      !checked_sub(n, pad_begin, &n) || !checked_sub(n, pad_end, &n))
    return false;
  if (n < 1) return false;
  *out = n;
  return true;
}

namespace {

std::string pair(int32_t a, int32_t b) {
  return std::to_string(a) + "x" + std::to_string(b);
}

std::string describe(const ConvTransposeAttrs& a, const Shape& w) {
  return "kernel " + w.str() + " (stride " + pair(a.stride_h, a.stride_w) +
         ", padding top/left/bottom/right " + std::to_string(a.pad_top) + "/" + std::to_string(a.pad_left) +
         "/" + std::to_string(a.pad_bottom) + "/" + std::to_string(a.pad_right) + ", dilation " +
         pair(a.dilation_h, a.dilation_w) + ", output_padding " +
         pair(a.output_padding_h, a.output_padding_w) + ", groups " + std::to_string(a.groups) + ")";
}

}  // namespace

Status infer_conv_transpose(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const auto& a = std::get<ConvTransposeAttrs>(node.attrs);
  const Shape& x = *src[0];
  const Shape& w = *src[1];
  if (x.rank != 4) return bad_model("ConvTranspose: input must be [B,Cin,H,W], got " + x.str());
  if (w.rank != 4) return bad_model("ConvTranspose: weight must be [Cin,Cout/groups,kh,kw], got " + w.str());
  if (a.groups < 1 || a.stride_h < 1 || a.stride_w < 1 || a.dilation_h < 1 || a.dilation_w < 1 ||
      a.pad_top < 0 || a.pad_left < 0 || a.pad_bottom < 0 || a.pad_right < 0 || a.output_padding_h < 0 ||
      a.output_padding_w < 0)
    return bad_model(
        "ConvTranspose: " + describe(a, w) +
        ": groups, stride and dilation must be positive, padding and output_padding non-negative");
  if (x[1] % a.groups != 0 || w[0] != x[1])
    return bad_model("ConvTranspose: input channels " + std::to_string(x[1]) + " and weight " + w.str() +
                     " do not agree for groups=" + std::to_string(a.groups) +
                     " (the weight's first dimension is the input channels, divisible by groups)");
  int64_t cout = 0;
  if (!checked_mul(w[1], a.groups, &cout) || cout < 1)
    return bad_model("ConvTranspose: weight " + w.str() + " with groups=" + std::to_string(a.groups) +
                     " gives no valid output channel count");
  if (num_src > 2 && src[2] && (src[2]->rank != 1 || (*src[2])[0] != cout))
    return bad_model("ConvTranspose: bias must be [" + std::to_string(cout) + "], got " + src[2]->str());
  int64_t ho = 0, wo = 0;
  if (!conv_transpose_output_size(x[2], w[2], a.pad_top, a.pad_bottom, a.stride_h, a.dilation_h,
                                  a.output_padding_h, &ho) ||
      !conv_transpose_output_size(x[3], w[3], a.pad_left, a.pad_right, a.stride_w, a.dilation_w,
                                  a.output_padding_w, &wo))
    return bad_model("ConvTranspose: " + describe(a, w) + " gives no output for input " + x.str() +
                     " (the pads crop everything, or a size overflows)");
  dst[0] = Shape{x[0], cout, ho, wo};
  return Status::Ok();
}

}  // namespace vitrt
