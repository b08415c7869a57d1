// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Pool2d (max or average, ONNX MaxPool / AveragePool): src [B,C,H,W] -> [B,C,Ho,Wo]. The output size is
// ONNX's and PyTorch's (core/ir/op_attrs.h, Pool2dAttrs); every size comes from a file, so it is computed in
// checked int64.
#include <string>

#include "common/checked_math.h"
#include "ops/op_registry.h"

namespace vitrt {

bool pool_output_size(int64_t in, int64_t kernel, int64_t pad_begin, int64_t pad_end, int64_t stride,
                      int64_t dilation, bool ceil_mode, int64_t* out) {
  if (in < 1 || kernel < 1 || pad_begin < 0 || pad_end < 0 || stride < 1 || dilation < 1) return false;
  int64_t padded = 0, span = 0;
  if (!checked_add(in, pad_begin, &padded) || !checked_add(padded, pad_end, &padded)) return false;
  if (!checked_mul(dilation, kernel - 1, &span) || !checked_add(span, 1, &span)) return false;
  if (padded < span) return false;
  const int64_t room = padded - span;  // >= 0: how far the window can move
  int64_t n = room / stride + 1;
  if (ceil_mode) {
    n += room % stride != 0;
    // PyTorch's rule (ONNX's since it follows it): the last window must start inside the input or its leading
    // padding, never in the trailing padding alone. (n - 1) * stride <= room + stride - 1: no overflow.
    if ((n - 1) * stride >= in + pad_begin) --n;
  }
  *out = n;
  return true;
}

namespace {

std::string pair(int32_t a, int32_t b) {
  return std::to_string(a) + "x" + std::to_string(b);
}

std::string describe(const Pool2dAttrs& a) {
  return std::string(a.kind == PoolKind::kMax ? "max" : "average") + " window " +
         pair(a.kernel_h, a.kernel_w) + " (stride " + pair(a.stride_h, a.stride_w) +
         ", padding top/left/bottom/right " + std::to_string(a.pad_top) + "/" + std::to_string(a.pad_left) +
         "/" + std::to_string(a.pad_bottom) + "/" + std::to_string(a.pad_right) + ", dilation " +
         pair(a.dilation_h, a.dilation_w) + (a.ceil_mode ? ", ceil_mode" : "") + ")";
}

}  // namespace

Status infer_pool2d(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<Pool2dAttrs>(node.attrs);
  const Shape& x = *src[0];
  if (x.rank != 4) return bad_model("Pool2d: input must be [B,C,H,W], got " + x.str());
  if (a.kind != PoolKind::kMax && a.kind != PoolKind::kAverage)
    return bad_model("Pool2d: unknown pooling kind " + std::to_string(static_cast<int>(a.kind)));
  if (a.kernel_h < 1 || a.kernel_w < 1 || a.stride_h < 1 || a.stride_w < 1 || a.dilation_h < 1 ||
      a.dilation_w < 1 || a.pad_top < 0 || a.pad_left < 0 || a.pad_bottom < 0 || a.pad_right < 0)
    return bad_model("Pool2d: " + describe(a) +
                     ": kernel, stride and dilation must be positive and padding non-negative");
  // As onnxruntime: a pad of a whole window would make windows of padding only (no value to take, or a
  // division by zero for an average).
  if (a.pad_top >= a.kernel_h || a.pad_bottom >= a.kernel_h || a.pad_left >= a.kernel_w ||
      a.pad_right >= a.kernel_w)
    return bad_model("Pool2d: " + describe(a) + ": each pad must be smaller than the window");
  if (a.kind == PoolKind::kAverage && (a.dilation_h != 1 || a.dilation_w != 1))
    return bad_model("Pool2d: " + describe(a) + ": average pooling takes no dilation");
  int64_t ho = 0, wo = 0;
  if (!pool_output_size(x[2], a.kernel_h, a.pad_top, a.pad_bottom, a.stride_h, a.dilation_h, a.ceil_mode,
                        &ho) ||
      !pool_output_size(x[3], a.kernel_w, a.pad_left, a.pad_right, a.stride_w, a.dilation_w, a.ceil_mode,
                        &wo))
    return bad_model("Pool2d: " + describe(a) + " does not fit input " + x.str());
  dst[0] = Shape{x[0], x[1], ho, wo};
  return Status::Ok();
}

}  // namespace vitrt
