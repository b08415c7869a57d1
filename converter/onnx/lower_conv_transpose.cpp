// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ConvTranspose (opsets 11-25; docs/onnx.md) -> the IR's ConvTranspose (core/ir/op_attrs.h,
// ConvTransposeAttrs). A 1-D [B,C,L] input becomes Reshape [B,C,1,L] -> ConvTranspose with a 1-high kernel ->
// Reshape [B,Cout,Lo], as 1-D pooling does. ONNX's `output_shape` and `auto_pad` are resolved here into pads
// and output_padding by the spec's formula: per spatial axis
//   total = stride·(in − 1) + output_padding + (kernel − 1)·dilation + 1 − out
// with out = output_shape (or in·stride for SAME without output_shape); SAME_UPPER puts floor(total/2) at the
// start and the rest at the end, NOTSET and SAME_LOWER the other way round (floor division, as the ONNX
// reference evaluates it: an output_shape one larger than the full output appends a zero-padded row, so a
// negative end pad becomes output_padding). A negative start pad (zeros before the output) is refused. With
// output_shape the `pads` attribute is ignored, as the spec says.
#include <climits>

#include "common/checked_math.h"
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

int64_t floor_half(int64_t v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

Status lower_conv_transpose(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *w;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &w));
  const std::vector<SymDim> dims = dims_of(*x);
  if (dims.size() == 5)
    return cx.unsupported_node(n, "3-D transposed convolution (input " + sym_dims_str(dims) +
                                      ") is not supported; only 1-D and 2-D");
  if (dims.size() != 3 && dims.size() != 4)
    return cx.bad_node(n, "input must be [N,C,L] or [N,C,H,W], got " + sym_dims_str(dims));
  const size_t spatial = dims.size() - 2;
  if (!w->is_const || w->kind != ConstKind::kFloat)
    return cx.unsupported_node(n, "the weight must be a float constant");
  if (w->shape.size() != dims.size())
    return cx.bad_node(n, "weight " + int_dims_str(w->shape) + " must be [C_in, C_out/group" +
                              (spatial == 1 ? ", k]" : ", kH, kW]") + " (rank " +
                              std::to_string(dims.size()) + ", as the input)");
  for (size_t d = 1; d < dims.size(); ++d)
    if (!dims[d].is_static())
      return cx.unsupported_node(
          n, "the batch in its channel or spatial axes (input " + sym_dims_str(dims) + ")");
  const int64_t cin = dims[1].c, group = cx.attr_int(n, "group", 1);
  if (group < 1 || group > INT32_MAX || cin % group != 0)
    return cx.bad_node(n, "group " + std::to_string(group) + " does not divide the " + std::to_string(cin) +
                              " input channels");
  if (w->shape[0] != cin)
    return cx.bad_node(n, "weight " + int_dims_str(w->shape) + " must start with the " + std::to_string(cin) +
                              " input channels ([C_in, C_out/group, kernel...])");
  std::vector<int64_t> kernel(w->shape.begin() + 2, w->shape.end());
  std::vector<int64_t> ks = cx.attr_ints(n, "kernel_shape"), strides = cx.attr_ints(n, "strides"),
                       dil = cx.attr_ints(n, "dilations"), pads = cx.attr_ints(n, "pads"),
                       out_pad = cx.attr_ints(n, "output_padding"),
                       out_shape = cx.attr_ints(n, "output_shape");
  if (!ks.empty() && ks != kernel)
    return cx.bad_node(
        n, "kernel_shape " + int_dims_str(ks) + " differs from the weight " + int_dims_str(w->shape));
  if (strides.empty()) strides.assign(spatial, 1);
  if (dil.empty()) dil.assign(spatial, 1);
  if (out_pad.empty()) out_pad.assign(spatial, 0);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (strides.size() != spatial || dil.size() != spatial || out_pad.size() != spatial ||
      pads.size() != 2 * spatial)
    return cx.bad_node(n, "strides, dilations, output_padding and pads must describe " +
                              std::to_string(spatial) + " spatial axes");
  for (size_t d = 0; d < spatial; ++d)
    if (kernel[d] < 1 || strides[d] < 1 || strides[d] > INT32_MAX || dil[d] < 1 || dil[d] > INT32_MAX ||
        out_pad[d] < 0 || out_pad[d] > INT32_MAX)
      return cx.bad_node(n,
                         "a stride or dilation is not in [1, 2^31), or an output_padding not in [0, 2^31)");
  for (int64_t p : pads)
    if (p < 0 || p > INT32_MAX) return cx.bad_node(n, "a pad is not in [0, 2^31)");
  const std::string auto_pad = cx.attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return cx.bad_node(n, "unknown auto_pad '" + auto_pad + "'");
  if (!out_shape.empty() && out_shape.size() != spatial)
    return cx.bad_node(n, "output_shape " + int_dims_str(out_shape) + " must give the " +
                              std::to_string(spatial) + " spatial sizes (no batch or channels)");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad == "VALID") pads.assign(2 * spatial, 0);
  if (!out_shape.empty() || same) {
    // Strides, dilations and output padding are below 2^31, but a length (up to 2^32) times a stride plus
    // a kernel span times a dilation can pass 2^63: the full length is computed checked.
    std::vector<int64_t> resolved(2 * spatial);
    for (size_t d = 0; d < spatial; ++d) {
      const int64_t in = dims[2 + d].c;
      int64_t target = 0, full = 0, span = 0;
      if (out_shape.empty() && !checked_mul(in, strides[d], &target))
        return cx.bad_node(
            n, "the SAME output length along spatial axis " + std::to_string(d) + " overflows int64");
      if (!out_shape.empty()) target = out_shape[d];
      if (target < 1)
        return cx.bad_node(n, "output_shape " + int_dims_str(out_shape) + " holds a size below 1");
      if (!checked_mul(strides[d], in - 1, &full) || !checked_mul(kernel[d] - 1, dil[d], &span) ||
          !checked_add(full, span, &full) || !checked_add(full, out_pad[d] + 1, &full))
        return cx.bad_node(n, "the full transposed convolution's length along spatial axis " +
                                  std::to_string(d) + " (input " + sym_dims_str(dims) +
                                  ") overflows int64: strides " + int_dims_str(strides) + ", dilations " +
                                  int_dims_str(dil) + ", output_padding " + int_dims_str(out_pad));
      const int64_t total = full - target;  // both in [1, 2^63)
      const int64_t half = floor_half(total);
      resolved[d] = auto_pad == "SAME_UPPER" ? half : total - half;
      resolved[d + spatial] = total - resolved[d];
      if (resolved[d] < 0)
        return cx.unsupported_node(
            n, "output_shape " + int_dims_str(out_shape.empty() ? std::vector<int64_t>{target} : out_shape) +
                   " is larger than the full transposed convolution (" + std::to_string(full) +
                   " along spatial axis " + std::to_string(d) +
                   "): ONNX's formula then puts zeros before the output, which the IR cannot express");
      if (resolved[d + spatial] < 0) {  // zeros after the output: output_padding
        out_pad[d] -= resolved[d + spatial];
        resolved[d + spatial] = 0;
      }
    }
    pads = resolved;
    for (size_t d = 0; d < spatial; ++d)
      if (out_pad[d] > INT32_MAX) return cx.bad_node(n, "output_shape is too large");
    for (int64_t p : pads)
      if (p > INT32_MAX)
        return cx.bad_node(n, "output_shape " + int_dims_str(out_shape) + " needs pads " +
                                  int_dims_str(pads) + ", beyond 2^31");
  }
  ConvTransposeAttrs a;
  auto narrow = [](int64_t v) { return static_cast<int32_t>(v); };  // all checked to be < 2^31 above
  a.groups = narrow(group);
  if (spatial == 2) {
    a.stride_h = narrow(strides[0]);
    a.dilation_h = narrow(dil[0]);
    a.pad_top = narrow(pads[0]);
    a.pad_bottom = narrow(pads[2]);
    a.output_padding_h = narrow(out_pad[0]);
  }
  // The last spatial axis is the width (a 1-D transposed convolution's only one; its kernel is 1 high).
  a.stride_w = narrow(strides[spatial - 1]);
  a.dilation_w = narrow(dil[spatial - 1]);
  a.pad_left = narrow(pads[spatial - 1]);
  a.pad_right = narrow(pads[2 * spatial - 1]);
  a.output_padding_w = narrow(out_pad[spatial - 1]);
  int32_t xt, wt, bt = kAbsent;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &xt));
  if (cx.has_input(n, 2)) VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 2, &bt));
  if (spatial == 2) {
    VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &wt));
    return emit(cx, n, OpType::kConvTranspose, a, {xt, wt, bt}, n.output(0));
  }
  const std::string out = n.output(0);
  wt = cx.add_constant(out + ".weight", {w->shape[0], w->shape[1], 1, w->shape[2]}, w->f);
  OnnxValue image, upsampled, result;
  VITRT_RETURN_IF_ERROR(
      reshape_to(cx, n, xt, dims, {dims[0], dims[1], SymDim::of(1), dims[2]}, out + ".image", &image));
  VITRT_RETURN_IF_ERROR(
      cx.add_op(n, OpType::kConvTranspose, a, {image.tensor, wt, bt}, out + ".upsampled", &upsampled));
  VITRT_RETURN_IF_ERROR(reshape_to(cx, n, upsampled.tensor, upsampled.dims,
                                   {upsampled.dims[0], upsampled.dims[1], upsampled.dims[3]}, out, &result));
  cx.set(out, std::move(result));
  return Status::Ok();
}

}  // namespace

std::map<std::string, Entry> conv_transpose_entries() {
  return {{"ConvTranspose",
           {lower_conv_transpose,
            {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads",
             "strides"}}}};
}

}  // namespace vitrt::convert::lowering
