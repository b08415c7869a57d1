// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/lower_ops.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "common/checked_math.h"
#include "onnx/dropout_identity.h"
#include "onnx/lower_common.h"

namespace vitrt::convert {
namespace {

using NodeProto = onnx::NodeProto;
using TP = onnx::TensorProto;

using lowering::dims_of;
using lowering::emit;
using lowering::extra_output_used;
using lowering::reshape_to;
using lowering::tensor_of;
using LowerEntry = lowering::Entry;

Status in(ImportContext& cx, const NodeProto& n, int i, OnnxValue** v) {
  return cx.input(n, i, v);
}

Status reshape_value(ImportContext& cx, const NodeProto& n, const std::vector<SymDim>& to,
                     int written_infer = -1) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  int32_t t;
  VITRT_RETURN_IF_ERROR(cx.ir_tensor(x, n.input(0), &t));
  const std::vector<SymDim> from = dims_of(*x);
  OnnxValue out;
  VITRT_RETURN_IF_ERROR(reshape_to(cx, n, t, from, to, n.output(0), &out, written_infer));
  cx.set(n.output(0), std::move(out));
  return Status::Ok();
}

Status lower_identity(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  if (n.op_type() == "Dropout") VITRT_RETURN_IF_ERROR(check_dropout_identity(cx, n));
  OnnxValue v = *x;
  if (n.op_type() == "Cast") {
    const int64_t to = cx.attr_int(n, "to", 0);
    if (to == TP::BOOL && !x->boolean) {  // float -> bool: x != 0 (NaN is true), as 0/1 (docs/onnx.md)
      int32_t t;
      VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
      const int32_t zero = cx.add_constant(n.output(0) + ".zero", {1}, {0.0f});
      OnnxValue out;
      VITRT_RETURN_IF_ERROR(
          cx.add_op(n, OpType::kCompare, CompareAttrs{CompareKind::kNotEqual}, {t, zero}, n.output(0), &out));
      out.boolean = true;
      cx.set(n.output(0), std::move(out));
      return Status::Ok();
    }
    if (to != TP::FLOAT && to != TP::BOOL)
      return cx.unsupported_node(n, "cast of an activation to " + onnx_type_name(static_cast<int32_t>(to)) +
                                        " (this build computes in float32 only)");
    v.boolean = to == TP::BOOL;  // a bool cast to float is its 0/1 values
  }
  cx.alias(n.output(0), v);
  return Status::Ok();
}

// ---- linear algebra ----

// [K,N] row-major -> [N,K] (the IR's Linear weight is PyTorch's [out, in]).
std::vector<float> transposed(const std::vector<float>& w, int64_t rows, int64_t cols, float scale) {
  std::vector<float> t(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = w[r * cols + c] * scale;
  return t;
}

// The bias of a following Add when `out_name` is read by exactly one Add whose other operand is a constant
// that broadcasts as a [N] vector over the last axis. Returns the Add's node index, or -1.
int bias_add(ImportContext& cx, const std::string& out_name, int64_t n_out, const OnnxValue** bias) {
  const int c = cx.single_consumer(out_name);
  if (c < 0) return -1;
  const NodeProto& add = cx.onnx_graph().node(c);
  // Its output becomes the Linear's: an Add without one (a hostile file) is lowered, and refused, on its own.
  if (add.op_type() != "Add" || add.input_size() != 2 || add.output_size() != 1 || add.output(0).empty())
    return -1;
  const std::string& other = add.input(0) == out_name ? add.input(1) : add.input(0);
  if (other == out_name) return -1;
  const OnnxValue* b = cx.find(other);
  if (!b || !b->is_const || b->kind != ConstKind::kFloat || b->pending_expand || b->numel() != n_out)
    return -1;
  for (size_t d = 0; d + 1 < b->shape.size(); ++d)
    if (b->shape[d] != 1) return -1;
  if (b->shape.empty() || b->shape.back() != n_out) return -1;
  *bias = b;
  return c;
}

Status linear(ImportContext& cx, int index, const NodeProto& n, int32_t x, std::vector<float> w_nk,
              int64_t nn, int64_t k, const std::vector<float>* bias_values) {
  const std::string name = n.output(0);
  const int32_t w = cx.add_constant(name + ".weight", {nn, k}, std::move(w_nk));
  std::vector<int32_t> inputs = {x, w};
  std::string out_name = n.output(0);
  const OnnxValue* bias = nullptr;
  const int add = bias_values ? -1 : bias_add(cx, n.output(0), nn, &bias);
  if (bias_values) {
    inputs.push_back(cx.add_constant(name + ".bias", {nn}, *bias_values));
  } else if (add >= 0) {
    inputs.push_back(cx.add_constant(name + ".bias", {nn}, bias->f));
    out_name = cx.onnx_graph().node(add).output(0);
    cx.consume(add);
  }
  (void)index;
  return emit(cx, n, OpType::kLinear, LinearAttrs{}, inputs, out_name);
}

Status lower_matmul(ImportContext& cx, int index, const NodeProto& n) {
  OnnxValue *a, *b;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &a));
  VITRT_RETURN_IF_ERROR(in(cx, n, 1, &b));
  if (a->rank() < 2 || b->rank() < 2)
    return cx.unsupported_node(
        n, "operands of rank < 2 (" + sym_dims_str(dims_of(*a)) + " · " + sym_dims_str(dims_of(*b)) + ")");
  if (b->is_const && b->rank() == 2 && b->kind == ConstKind::kFloat && !a->is_const) {
    int32_t x;
    VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &x));
    const int64_t k = b->shape[0], nn = b->shape[1];
    return linear(cx, index, n, x, transposed(b->f, k, nn, 1.0f), nn, k, nullptr);
  }
  int32_t x, y;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &x));
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &y));
  return emit(cx, n, OpType::kMatMul, NoAttrs{}, {x, y}, n.output(0));
}

Status lower_gemm(ImportContext& cx, int index, const NodeProto& n) {
  OnnxValue *a, *b;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &a));
  VITRT_RETURN_IF_ERROR(in(cx, n, 1, &b));
  if (!b->is_const || b->kind != ConstKind::kFloat || b->rank() != 2)
    return cx.unsupported_node(n, "B must be a constant 2-D float matrix (a weight)");
  if (a->rank() != 2) return cx.bad_node(n, "A must be 2-D, got " + sym_dims_str(dims_of(*a)));
  const float alpha = cx.attr_float(n, "alpha", 1.0f), beta = cx.attr_float(n, "beta", 1.0f);
  const bool trans_b = cx.attr_int(n, "transB", 0) != 0;
  const int64_t k = trans_b ? b->shape[1] : b->shape[0], nn = trans_b ? b->shape[0] : b->shape[1];
  std::vector<float> w;
  if (trans_b) {
    w = b->f;
    if (alpha != 1.0f)
      for (float& v : w) v *= alpha;
  } else {
    w = transposed(b->f, k, nn, alpha);
  }
  int32_t x;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &x));
  if (cx.attr_int(n, "transA", 0) != 0) {  // Aᵀ first: a plain Transpose
    OnnxValue t;
    VITRT_RETURN_IF_ERROR(
        cx.add_op(n, OpType::kTranspose, TransposeAttrs{{1, 0}}, {x}, n.output(0) + ".a_t", &t));
    x = t.tensor;
  }
  if (!cx.has_input(n, 2)) return linear(cx, index, n, x, std::move(w), nn, k, nullptr);
  OnnxValue* c;
  VITRT_RETURN_IF_ERROR(in(cx, n, 2, &c));
  if (!c->is_const || c->kind != ConstKind::kFloat) return cx.unsupported_node(n, "C must be a constant");
  bool vector = c->numel() == nn || c->numel() == 1;
  for (size_t d = 0; vector && d + 1 < c->shape.size(); ++d) vector = c->shape[d] == 1;
  if (vector) {
    std::vector<float> bias(static_cast<size_t>(nn), c->f[0]);
    if (c->numel() == nn) bias = c->f;
    if (beta != 1.0f)
      for (float& v : bias) v *= beta;
    return linear(cx, index, n, x, std::move(w), nn, k, &bias);
  }
  // A bias per row and column: Linear without bias, then + beta·C (C broadcasts as numpy does).
  const std::string out = n.output(0);
  const int32_t wt = cx.add_constant(out + ".weight", {nn, k}, std::move(w));
  OnnxValue y;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kLinear, LinearAttrs{}, {x, wt}, out + ".product", &y));
  std::vector<float> cv = c->f;
  if (beta != 1.0f)
    for (float& v : cv) v *= beta;
  for (int64_t d : c->shape)
    if (d < 1) return cx.bad_node(n, "C has an empty dimension");
  const int32_t ct = cx.add_constant(out + ".c", c->shape, std::move(cv));
  return emit(cx, n, OpType::kAdd, NoAttrs{}, {y.tensor, ct}, out);
}

// ---- convolution, normalisation, pooling ----

Status lower_conv(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *w;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  VITRT_RETURN_IF_ERROR(in(cx, n, 1, &w));
  if (!w->is_const || w->rank() != 4 || x->rank() != 4)
    return cx.unsupported_node(n, "only 2-D convolution with a constant weight is supported (input " +
                                      sym_dims_str(dims_of(*x)) + ")");
  Conv2dAttrs a;
  std::vector<int64_t> strides = cx.attr_ints(n, "strides"), dil = cx.attr_ints(n, "dilations"),
                       pads = cx.attr_ints(n, "pads"), ks = cx.attr_ints(n, "kernel_shape");
  if (strides.empty()) strides = {1, 1};
  if (dil.empty()) dil = {1, 1};
  if (pads.empty()) pads = {0, 0, 0, 0};
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return cx.bad_node(n, "strides, dilations and pads must describe 2 spatial axes");
  if (!ks.empty() && (ks.size() != 2 || ks[0] != w->shape[2] || ks[1] != w->shape[3]))
    return cx.bad_node(
        n, "kernel_shape " + int_dims_str(ks) + " differs from the weight " + int_dims_str(w->shape));
  // Before SAME's arithmetic divides by the strides and multiplies by the dilations.
  for (int64_t v : {strides[0], strides[1], dil[0], dil[1]})
    if (v < 1 || v > INT32_MAX)
      return cx.bad_node(n, "strides " + int_dims_str(strides) + " and dilations " + int_dims_str(dil) +
                                " must be in [1, 2^31)");
  const std::string auto_pad = cx.attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int d = 0; d < 2; ++d) {
      const SymDim size = x->dims[2 + d];
      if (!size.is_static()) return cx.unsupported_node(n, "auto_pad SAME over a batch-dependent axis");
      // size and the kernel are at most 2^32, strides and dilations below 2^31: only the span can come
      // near 2^63.
      const int64_t out = (size.c + strides[d] - 1) / strides[d];
      int64_t span = 0, total = 0;
      if (!checked_mul(w->shape[2 + d] - 1, dil[d], &span) ||
          !checked_add((out - 1) * strides[d] + 1 - size.c, span, &total))
        return cx.bad_node(n, "the SAME padding of kernel " + int_dims_str(w->shape) + " with dilations " +
                                  int_dims_str(dil) + " overflows int64");
      total = std::max<int64_t>(total, 0);
      pads[d] = total / 2;
      pads[d + 2] = total - total / 2;
      if (auto_pad == "SAME_LOWER") std::swap(pads[d], pads[d + 2]);
    }
  } else if (auto_pad != "NOTSET") {
    return cx.bad_node(n, "unknown auto_pad '" + auto_pad + "'");
  }
  if (pads[0] != pads[2] || pads[1] != pads[3])
    return cx.unsupported_node(
        n, "asymmetric padding " + int_dims_str(pads) + " (the IR's Conv2d pads each side equally)");
  for (int64_t v : {strides[0], strides[1], dil[0], dil[1], pads[0], pads[1], cx.attr_int(n, "group", 1)})
    if (v < 0 || v > INT32_MAX) return cx.bad_node(n, "a stride, dilation, pad or group is out of range");
  a.stride_h = static_cast<int32_t>(strides[0]);
  a.stride_w = static_cast<int32_t>(strides[1]);
  a.dilation_h = static_cast<int32_t>(dil[0]);
  a.dilation_w = static_cast<int32_t>(dil[1]);
  a.pad_h = static_cast<int32_t>(pads[0]);
  a.pad_w = static_cast<int32_t>(pads[1]);
  a.groups = static_cast<int32_t>(cx.attr_int(n, "group", 1));
  int32_t xt, wt, bt = kAbsent;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &xt));
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &wt));
  if (cx.has_input(n, 2)) VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 2, &bt));
  return emit(cx, n, OpType::kConv2d, a, {xt, wt, bt}, n.output(0));
}

// A normalisation's `epsilon` (default 1e-5), which must be finite and >= 0: a NaN or infinite one imported
// into a model that turned every output into NaN (or 0) without an error.
Status lower_batch_norm(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  if (x->rank() != 4) return cx.unsupported_node(n, "only 4-D inputs (the IR's BatchNorm2d)");
  if (cx.attr_int(n, "training_mode", 0) != 0) return cx.unsupported_node(n, "training_mode=1");
  if (extra_output_used(cx, n)) return cx.unsupported_node(n, "its running statistics outputs are read");
  float eps;
  VITRT_RETURN_IF_ERROR(lowering::norm_epsilon(cx, n, &eps));
  std::vector<int32_t> t(5);
  for (int i = 0; i < 5; ++i) VITRT_RETURN_IF_ERROR(tensor_of(cx, n, i, &t[i]));
  return emit(cx, n, OpType::kBatchNorm2d, BatchNorm2dAttrs{eps}, t, n.output(0));
}

Status lower_layer_norm(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  const int64_t axis = cx.attr_int(n, "axis", -1);
  if (axis != -1 && axis != x->rank() - 1)
    return cx.unsupported_node(n, "axis " + std::to_string(axis) + " (only the last axis is supported)");
  if (extra_output_used(cx, n)) return cx.unsupported_node(n, "its Mean / InvStdDev outputs are read");
  float eps;
  VITRT_RETURN_IF_ERROR(lowering::norm_epsilon(cx, n, &eps));
  int32_t xt, g, b = kAbsent;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &xt));
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &g));
  if (cx.has_input(n, 2)) VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 2, &b));
  return emit(cx, n, OpType::kLayerNorm, LayerNormAttrs{eps}, {xt, g, b}, n.output(0));
}

// InstanceNormalization (opset 6, unchanged through 18): one InstanceNorm op (y = scale·(x − mean)/sqrt(var
// + epsilon) + B per (batch, channel) plane, biased variance), not the nine primitive ops it expands to.
Status lower_instance_norm(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  if (x->rank() < 3)
    return cx.bad_node(n, "input must be [N,C,D1,...] (rank >= 3), got rank " + std::to_string(x->rank()));
  float eps;
  VITRT_RETURN_IF_ERROR(lowering::norm_epsilon(cx, n, &eps));
  std::vector<int32_t> t(3);
  for (int i = 0; i < 3; ++i) VITRT_RETURN_IF_ERROR(tensor_of(cx, n, i, &t[i]));
  return emit(cx, n, OpType::kInstanceNorm, InstanceNormAttrs{eps}, t, n.output(0));
}

Status lower_global_avg_pool(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  if (x->rank() != 4) return cx.unsupported_node(n, "only 4-D inputs");
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  return emit(cx, n, OpType::kAdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{1, 1}, {t}, n.output(0));
}

// Pool2d attributes of a MaxPool (opset 11/12) or AveragePool (opset 11) over `spatial` (1 or 2) axes of
// sizes `size`, as one 2-D window (a 1-D pooling gets a 1-high window).
Status pool_attrs(ImportContext& cx, const NodeProto& n, const std::vector<int64_t>& size, Pool2dAttrs* a) {
  const size_t spatial = size.size();
  std::vector<int64_t> ks = cx.attr_ints(n, "kernel_shape"), strides = cx.attr_ints(n, "strides"),
                       dil = cx.attr_ints(n, "dilations"), pads = cx.attr_ints(n, "pads");
  if (strides.empty()) strides.assign(spatial, 1);
  if (dil.empty()) dil.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (ks.size() != spatial || strides.size() != spatial || dil.size() != spatial ||
      pads.size() != 2 * spatial)
    return cx.bad_node(n, "kernel_shape, strides, dilations and pads must describe " +
                              std::to_string(spatial) + " spatial axes");
  for (size_t d = 0; d < spatial; ++d)
    if (ks[d] < 1 || ks[d] > INT32_MAX || strides[d] < 1 || strides[d] > INT32_MAX || dil[d] < 1 ||
        dil[d] > INT32_MAX)
      return cx.bad_node(n, "a kernel size, stride or dilation is not in [1, 2^31)");
  const std::string auto_pad = cx.attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    pads.assign(2 * spatial, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // ONNX: out = ceil(in / stride); the padding that makes the last window end at the input's end
    // (SAME_UPPER puts the odd one at the end). All operands are < 2^31, so the int64 arithmetic cannot
    // overflow.
    for (size_t d = 0; d < spatial; ++d) {
      const int64_t out = (size[d] + strides[d] - 1) / strides[d];
      const int64_t total = std::max<int64_t>((out - 1) * strides[d] + (ks[d] - 1) * dil[d] + 1 - size[d], 0);
      pads[d] = total / 2;
      pads[d + spatial] = total - total / 2;
      if (auto_pad == "SAME_LOWER") std::swap(pads[d], pads[d + spatial]);
    }
  } else if (auto_pad != "NOTSET") {
    return cx.bad_node(n, "unknown auto_pad '" + auto_pad + "'");
  }
  for (int64_t v : pads)
    if (v < 0 || v > INT32_MAX) return cx.bad_node(n, "a pad is not in [0, 2^31)");
  const int64_t ceil_mode = cx.attr_int(n, "ceil_mode", 0);
  const int64_t include_pad = cx.attr_int(n, "count_include_pad", 0);
  if ((ceil_mode != 0 && ceil_mode != 1) || (include_pad != 0 && include_pad != 1))
    return cx.bad_node(n, "ceil_mode and count_include_pad must be 0 or 1");
  auto narrow = [](int64_t v) { return static_cast<int32_t>(v); };  // all checked to be < 2^31 above
  if (spatial == 2) {
    a->kernel_h = narrow(ks[0]);
    a->stride_h = narrow(strides[0]);
    a->dilation_h = narrow(dil[0]);
    a->pad_top = narrow(pads[0]);
    a->pad_bottom = narrow(pads[2]);
  }
  // The last spatial axis is the window's width (a 1-D pooling's only one; its window is 1 high).
  a->kernel_w = narrow(ks[spatial - 1]);
  a->stride_w = narrow(strides[spatial - 1]);
  a->dilation_w = narrow(dil[spatial - 1]);
  a->pad_left = narrow(pads[spatial - 1]);
  a->pad_right = narrow(pads[2 * spatial - 1]);
  a->ceil_mode = ceil_mode == 1;
  a->count_include_pad = include_pad == 1;
  return Status::Ok();
}

// MaxPool and AveragePool over 2 spatial axes -> Pool2d; over 1 (a [B,C,L] input) -> Reshape to [B,C,1,L],
// Pool2d, Reshape back. GlobalMaxPool of a 4-D input -> Pool2d with the whole image as the window.
Status lower_pool(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  const std::vector<SymDim> dims = dims_of(*x);
  if (dims.size() != 3 && dims.size() != 4)
    return cx.unsupported_node(n, "only 1-D and 2-D pooling is supported (input " + sym_dims_str(dims) + ")");
  if (extra_output_used(cx, n)) return cx.unsupported_node(n, "its Indices output is read");
  std::vector<int64_t> size;
  for (size_t d = 2; d < dims.size(); ++d) {
    if (!dims[d].is_static()) return cx.unsupported_node(n, "pools over a batch-dependent axis");
    size.push_back(dims[d].c);
  }
  Pool2dAttrs a;
  a.kind = n.op_type() == "AveragePool" ? PoolKind::kAverage : PoolKind::kMax;
  if (n.op_type() == "GlobalMaxPool") {
    if (size.size() != 2) return cx.unsupported_node(n, "only 4-D inputs");
    if (size[0] > INT32_MAX || size[1] > INT32_MAX) return cx.bad_node(n, "the image is too large");
    a.kernel_h = static_cast<int32_t>(size[0]);
    a.kernel_w = static_cast<int32_t>(size[1]);
  } else {
    VITRT_RETURN_IF_ERROR(pool_attrs(cx, n, size, &a));
  }
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  if (dims.size() == 4) return emit(cx, n, OpType::kPool2d, a, {t}, n.output(0));
  const std::string out = n.output(0);
  OnnxValue image, pooled, result;
  VITRT_RETURN_IF_ERROR(
      reshape_to(cx, n, t, dims, {dims[0], dims[1], SymDim::of(1), dims[2]}, out + ".image", &image));
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kPool2d, a, {image.tensor}, out + ".pooled", &pooled));
  VITRT_RETURN_IF_ERROR(reshape_to(cx, n, pooled.tensor, pooled.dims,
                                   {pooled.dims[0], pooled.dims[1], pooled.dims[3]}, out, &result));
  cx.set(out, std::move(result));
  return Status::Ok();
}

Status lower_softmax(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  const int64_t axis = cx.attr_int(n, "axis", cx.opset() >= 13 ? -1 : 1);
  int ax;
  VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, axis, x->rank(), &ax));
  // Before opset 13 (Log)Softmax flattens to 2-D at `axis`: the same as the IR's only when it is the last
  // axis.
  if (cx.opset() < 13 && ax != x->rank() - 1)
    return cx.unsupported_node(n, "axis " + std::to_string(axis) +
                                      " before opset 13 (a softmax over the flattened "
                                      "trailing axes); only the last axis is supported");
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  const OpType type = n.op_type() == "LogSoftmax" ? OpType::kLogSoftmax : OpType::kSoftmax;
  return emit(cx, n, type, SoftmaxAttrs{ax}, {t}, n.output(0));
}

// ---- layout ----

// A Transpose's permutation (ONNX's default: the axes reversed); empty when it is not a permutation of `rank`
// axes.
std::vector<int64_t> transpose_perm(const ImportContext& cx, const NodeProto& n, int rank) {
  std::vector<int64_t> perm = cx.attr_ints(n, "perm");
  if (perm.empty())
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  if (perm.size() != static_cast<size_t>(rank)) return {};
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) return {};
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

// torch.onnx.export folds y = Transpose(x, p) -> z = Transpose(y, q) into z = Transpose(x, p∘q) even where y
// has other readers (LaViT's reused scores psi(..)ᵀ, which the next stage's attention residual permutes
// again). When x has exactly two readers, both Transposes, the later one is read from the earlier one's
// output again, as the model wrote it and the .pth route builds it, so that fuse_attention sees x read once.
// Pure data movement: the same elements in the same places. Returns the earlier Transpose's output and the
// permutation `rest` that takes it to this node's result; "" when the form does not apply.
std::string unfold_transposes(ImportContext& cx, int index, const NodeProto& n, int rank,
                              const std::vector<int64_t>& perm, std::vector<int64_t>* rest) {
  const std::vector<int>& readers = cx.consumers(n.input(0));
  if (readers.size() != 2 || perm.empty()) return "";
  const int first = std::min(readers[0], readers[1]);
  if (first == index || std::max(readers[0], readers[1]) != index) return "";
  const NodeProto& t1 = cx.onnx_graph().node(first);
  if (t1.op_type() != "Transpose" || t1.input_size() != 1 || t1.output_size() != 1) return "";
  const OnnxValue* y = cx.find(t1.output(0));
  const std::vector<int64_t> p1 = transpose_perm(cx, t1, rank);
  if (!y || y->is_const || y->rank() != rank || p1.empty()) return "";
  // z[i] = x[perm[i]] and y[j] = x[p1[j]]: z[i] = y[rest[i]] with p1[rest[i]] = perm[i].
  std::vector<int64_t> inverse(static_cast<size_t>(rank));
  for (int j = 0; j < rank; ++j) inverse[static_cast<size_t>(p1[static_cast<size_t>(j)])] = j;
  rest->clear();
  for (int64_t p : perm) rest->push_back(inverse[static_cast<size_t>(p)]);
  return t1.output(0);
}

Status lower_transpose(ImportContext& cx, int index, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  std::vector<int64_t> perm = cx.attr_ints(n, "perm");
  if (perm.empty())
    for (int d = x->rank() - 1; d >= 0; --d) perm.push_back(d);
  std::vector<int64_t> rest;
  const std::string y = unfold_transposes(cx, index, n, x->rank(), transpose_perm(cx, n, x->rank()), &rest);
  if (!y.empty()) perm = rest;
  TransposeAttrs a;
  for (int64_t p : perm) a.perm.push_back(static_cast<int32_t>(std::clamp<int64_t>(p, -1, 64)));
  int32_t t;
  if (y.empty()) {
    VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  } else {
    VITRT_RETURN_IF_ERROR(cx.ir_tensor(cx.find(y), y, &t).with_context(cx.where(n)));
  }
  return emit(cx, n, OpType::kTranspose, a, {t}, n.output(0));
}

Status lower_reshape(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *s;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  VITRT_RETURN_IF_ERROR(in(cx, n, 1, &s));
  if (!s->is_const || s->kind != ConstKind::kInt)
    return cx.unsupported_node(n, "the target shape is computed from data, not known at import");
  const bool allowzero = cx.attr_int(n, "allowzero", 0) != 0;
  const std::vector<SymDim> from = dims_of(*x);
  std::vector<SymDim> spec = s->i;
  // A static-batch export writes the batch into its reshape targets: there it is the batch.
  if (cx.static_batch() && !spec.empty() && !from.empty() && spec[0] == SymDim::of(cx.static_batch()) &&
      from[0] == SymDim::batch())
    spec[0] = SymDim::batch();
  std::vector<int64_t> at[2];
  for (int b = 1; b <= 2; ++b) {
    std::vector<int64_t> target;
    int64_t total = 1, known = 1;
    int infer = -1;
    for (const SymDim& d : from) total *= d.at(b);  // an activation's: within the IR's element limit
    for (size_t d = 0; d < spec.size(); ++d) {
      int64_t v;
      if (!spec[d].at_checked(b, &v)) return cx.bad_node(n, "shape " + sym_dims_str(spec) + " overflows");
      if (v == 0 && !allowzero) {
        if (d >= from.size()) return cx.bad_node(n, "shape copies a dimension the input lacks");
        v = from[d].at(b);
      }
      if (v == -1) {
        if (infer >= 0) return cx.bad_node(n, "shape has two -1 dimensions");
        infer = static_cast<int>(d);
      } else if (v < 1) {
        return cx.bad_node(n, "shape " + sym_dims_str(spec) + " has a dimension below 1");
      } else if (!checked_mul(known, v, &known)) {
        return cx.bad_node(n, "shape " + sym_dims_str(spec) + " overflows");
      }
      target.push_back(v);
    }
    if (infer >= 0) {
      if (total % known) return cx.bad_node(n, "cannot infer the -1 of " + sym_dims_str(spec));
      target[infer] = total / known;
    }
    at[b - 1] = target;
  }
  std::vector<SymDim> to;
  int written_infer = -1;
  for (size_t d = 0; d < at[0].size(); ++d) {
    const int64_t k = at[1][d] - at[0][d];
    to.push_back(SymDim{at[0][d] - k, k});
    if (spec[d] == SymDim::of(-1)) written_infer = static_cast<int>(d);
  }
  return reshape_value(cx, n, to, written_infer);
}

Status lower_flatten(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  int axis;
  VITRT_RETURN_IF_ERROR(onnx_flatten_axis(cx, n, x->rank(), &axis));
  SymDim a = SymDim::of(1), b = SymDim::of(1);
  for (int d = 0; d < x->rank(); ++d) {
    SymDim& p = d < axis ? a : b;
    const SymDim v = x->dims[d];
    if (!p.is_static() && !v.is_static()) return cx.unsupported_node(n, "flattens the batch with itself");
    p = p.is_static() ? SymDim{v.c * p.c, v.k * p.c} : SymDim{p.c * v.c, p.k * v.c};
  }
  return reshape_value(cx, n, {a, b});
}

Status lower_squeeze(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  std::vector<int64_t> axes = cx.attr_ints(n, "axes");
  const bool given = cx.attr(n, "axes") || cx.has_input(n, 1);
  if (!cx.attr(n, "axes") && cx.has_input(n, 1)) {
    OnnxValue* a;
    VITRT_RETURN_IF_ERROR(in(cx, n, 1, &a));
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *a, "axes", &axes));
  }
  const bool unsqueeze = n.op_type() == "Unsqueeze";
  const int out_rank = unsqueeze ? x->rank() + static_cast<int>(axes.size()) : x->rank();
  std::vector<bool> mark(static_cast<size_t>(out_rank), false);
  for (int64_t v : axes) {
    int ax;
    VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, v, out_rank, &ax));
    mark[ax] = true;
  }
  std::vector<SymDim> to;
  if (unsqueeze) {
    size_t k = 0;
    for (int d = 0; d < out_rank; ++d) to.push_back(mark[d] ? SymDim::of(1) : x->dims[k++]);
  } else {
    for (int d = 0; d < x->rank(); ++d) {
      const bool one = x->dims[d] == SymDim::of(1);
      if (given ? mark[d] : one) {
        if (!one)
          return cx.bad_node(n, "squeezes axis " + std::to_string(d) + " of size " + x->dims[d].str());
        continue;
      }
      to.push_back(x->dims[d]);
    }
  }
  return reshape_value(cx, n, to);
}

Status lower_concat(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* first;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &first));
  const int rank = first->pending_expand ? static_cast<int>(first->expanded.size()) : first->rank();
  int axis;
  VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, cx.attr_int(n, "axis", 0), rank, &axis));
  std::vector<int32_t> ts;
  std::vector<std::vector<SymDim>> expected;
  for (int i = 0; i < n.input_size(); ++i) {
    OnnxValue* v;
    VITRT_RETURN_IF_ERROR(in(cx, n, i, &v));
    if (v->pending_expand) {
      // The IR's Concat broadcasts every axis but its own: read the unexpanded source and check below that
      // the result has the shape the Expand asked for.
      OnnxValue src = *v;
      src.pending_expand = false;
      int32_t t;
      VITRT_RETURN_IF_ERROR(cx.ir_tensor(&src, n.input(i) + ".source", &t));
      if (v->is_const) v->ir_constant = src.ir_constant;
      ts.push_back(t);
      expected.push_back(v->expanded);
    } else {
      int32_t t;
      VITRT_RETURN_IF_ERROR(cx.ir_tensor(v, n.input(i), &t));
      ts.push_back(t);
      expected.push_back(dims_of(*v));
    }
  }
  if (ts.size() > static_cast<size_t>(kMaxOpInputs))
    return cx.unsupported_node(n, std::to_string(ts.size()) + " inputs (the IR's Concat takes at most " +
                                      std::to_string(kMaxOpInputs) + ")");
  OnnxValue out;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kConcat, ConcatAttrs{axis}, ts, n.output(0), &out));
  for (const auto& e : expected)
    for (int d = 0; d < rank; ++d) {
      // A static-batch export concatenates batch-1 constants (a class token) where the batch is.
      const bool batch_one = cx.static_batch() && static_cast<int>(e.size()) == rank &&
                             e[d] == SymDim::of(1) && out.dims[d] == SymDim::batch();
      if (d != axis && !batch_one && (static_cast<int>(e.size()) != rank || e[d] != out.dims[d]))
        return cx.unsupported_node(n, "an input of shape " + sym_dims_str(e) + " would broadcast to " +
                                          sym_dims_str(out.dims) + " (ONNX's Concat does not broadcast)");
    }
  cx.set(n.output(0), std::move(out));
  return Status::Ok();
}

// One IR Slice per sliced axis, with its step (strided, or reversed for a negative one: version 2); a
// full-range step-1 slice of any axis is dropped.
Status lower_slice(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  std::vector<int64_t> starts, ends, axes, steps;
  if (cx.opset() < 10) return cx.unsupported_node(n, "Slice before opset 10");
  OnnxValue* v;
  VITRT_RETURN_IF_ERROR(in(cx, n, 1, &v));
  VITRT_RETURN_IF_ERROR(const_ints(cx, n, *v, "starts", &starts));
  VITRT_RETURN_IF_ERROR(in(cx, n, 2, &v));
  VITRT_RETURN_IF_ERROR(const_ints(cx, n, *v, "ends", &ends));
  if (cx.has_input(n, 3)) {
    VITRT_RETURN_IF_ERROR(in(cx, n, 3, &v));
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *v, "axes", &axes));
  }
  if (cx.has_input(n, 4)) {
    VITRT_RETURN_IF_ERROR(in(cx, n, 4, &v));
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *v, "steps", &steps));
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return cx.bad_node(n, "starts, ends, axes and steps differ in length");
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  OnnxValue cur = *x;
  if (cur.is_const) {
    cur.is_const = false;
    cur.tensor = t;
    cur.dims = dims_of(*x);
  }
  for (size_t i = 0; i < starts.size(); ++i) {
    int ax;
    VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, axes[i], cur.rank(), &ax));
    const SymDim dim = cur.dims[ax];
    if (!dim.is_static()) {
      if ((starts[i] == 0 || starts[i] <= -INT32_MAX) && ends[i] >= INT32_MAX && steps[i] == 1) continue;
      return cx.unsupported_node(n, "slices the batch axis " + std::to_string(ax));
    }
    const int64_t step = steps[i];
    if (step == 0 || step == INT64_MIN) return cx.bad_node(n, "step " + std::to_string(step));
    // ONNX's clamping: a negative bound counts from the end; going forwards both lie in [0, dim]; going
    // backwards start lies in [0, dim-1] and end in [-1, dim-1] (-1: through index 0). x + dim cannot
    // overflow for x < 0.
    const int64_t n_ax = dim.c;
    int64_t b = starts[i] < 0 ? starts[i] + n_ax : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + n_ax : ends[i];
    b = step > 0 ? std::clamp<int64_t>(b, 0, n_ax) : std::clamp<int64_t>(b, 0, n_ax - 1);
    e = step > 0 ? std::clamp<int64_t>(e, 0, n_ax) : std::clamp<int64_t>(e, -1, n_ax - 1);
    if (step > 0 ? e <= b : e >= b)
      return cx.unsupported_node(n, "an empty slice (the IR has no empty tensors)");
    if (b == 0 && e == n_ax && step == 1) continue;
    // The IR's Slice reads bounds as Python does, where -1 is the last element: "through index 0" is written
    // as INT64_MIN, which stays below -1 after adding the axis size.
    SliceAttrs a{ax, b, e < 0 ? INT64_MIN : e, step};
    OnnxValue out;
    const std::string name = n.output(0) + (i + 1 < starts.size() ? ".axis" + std::to_string(ax) : "");
    VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kSlice, a, {cur.tensor}, name, &out));
    cur = std::move(out);
  }
  cx.set(n.output(0), std::move(cur));
  return Status::Ok();
}

// Gather with constant indices along an axis of static size: one Slice per index (a scalar index also drops
// the axis, x[:, 0] -> Slice + Reshape), joined by a Concat when there are several.
Status lower_gather(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *iv;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  VITRT_RETURN_IF_ERROR(in(cx, n, 1, &iv));
  std::vector<int64_t> idx;
  VITRT_RETURN_IF_ERROR(const_ints(cx, n, *iv, "indices", &idx));
  if (iv->shape.size() > 1 || idx.empty() || idx.size() > static_cast<size_t>(kMaxOpInputs))
    return cx.unsupported_node(n, "indices " + int_dims_str(iv->shape) +
                                      " (a scalar or 1-D list of at most " + std::to_string(kMaxOpInputs) +
                                      " constant indices is supported)");
  const std::vector<SymDim> from = dims_of(*x);
  int ax;
  VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, cx.attr_int(n, "axis", 0), static_cast<int>(from.size()), &ax));
  if (!from[ax].is_static()) return cx.unsupported_node(n, "gathers along the batch axis");
  const int64_t dim = from[ax].c;
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  const bool scalar = iv->shape.empty();
  std::vector<int32_t> parts;
  OnnxValue out;
  for (size_t k = 0; k < idx.size(); ++k) {
    int64_t i = idx[k];
    if (i < -dim || i >= dim) return cx.bad_node(n, "index " + std::to_string(i) + " out of range");
    if (i < 0) i += dim;
    const std::string name = n.output(0) + (scalar || idx.size() > 1 ? ".slice" + std::to_string(k) : "");
    VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kSlice, SliceAttrs{ax, i, i + 1}, {t}, name, &out));
    parts.push_back(out.tensor);
  }
  if (scalar) {
    std::vector<SymDim> to = from;
    to.erase(to.begin() + ax);
    VITRT_RETURN_IF_ERROR(reshape_to(cx, n, parts[0], out.dims, to, n.output(0), &out));
  } else if (parts.size() > 1) {
    VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kConcat, ConcatAttrs{ax}, parts, n.output(0), &out));
  }
  cx.set(n.output(0), std::move(out));
  return Status::Ok();
}

Status lower_split(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(in(cx, n, 0, &x));
  const std::vector<SymDim> from = dims_of(*x);
  int ax;
  VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, cx.attr_int(n, "axis", 0), static_cast<int>(from.size()), &ax));
  if (!from[ax].is_static()) return cx.unsupported_node(n, "splits the batch axis");
  std::vector<int64_t> sizes = cx.attr_ints(n, "split");
  if (sizes.empty() && cx.has_input(n, 1)) {
    OnnxValue* s;
    VITRT_RETURN_IF_ERROR(in(cx, n, 1, &s));
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *s, "split", &sizes));
  }
  const int64_t parts = n.output_size(), dim = from[ax].c;
  if (cx.attr(n, "num_outputs")) {
    // Opset 18: parts of ceil(dim / num_outputs), the last one smaller when the axis does not divide.
    if (cx.opset() < 18) return cx.bad_node(n, "has no attribute 'num_outputs' before opset 18");
    if (!sizes.empty()) return cx.bad_node(n, "gives both 'split' and 'num_outputs'");
    const int64_t num = cx.attr_int(n, "num_outputs", 0);
    if (num != parts)
      return cx.bad_node(n,
                         "num_outputs " + std::to_string(num) + " but " + std::to_string(parts) + " outputs");
    const int64_t chunk = dim / parts + (dim % parts != 0);
    sizes.assign(static_cast<size_t>(parts), chunk);
    sizes.back() = dim - chunk * (parts - 1);
  }
  if (sizes.empty()) {
    if (parts < 1 || dim % parts) return cx.unsupported_node(n, "an uneven split without sizes");
    sizes.assign(static_cast<size_t>(parts), dim / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != parts)
    return cx.bad_node(n, "split sizes do not match the outputs");
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  int64_t at = 0;
  for (int64_t p = 0; p < parts; ++p) {
    if (sizes[p] < 1 || sizes[p] > dim - at) return cx.bad_node(n, "split sizes exceed the axis");
    if (!n.output(static_cast<int>(p)).empty()) {
      OnnxValue out;
      VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kSlice, SliceAttrs{ax, at, at + sizes[p]}, {t},
                                      n.output(static_cast<int>(p)), &out));
      cx.set(n.output(static_cast<int>(p)), std::move(out));
    }
    at += sizes[p];
  }
  if (at != dim) return cx.bad_node(n, "split sizes do not add up to the axis");
  return Status::Ok();
}

std::map<std::string, LowerEntry> structural_entries() {
  return {
      {"Identity", {lower_identity, {}}},
      {"Dropout", {lower_identity, {"ratio", "seed"}}},
      {"Cast", {lower_identity, {"to", "saturate"}}},
      {"MatMul", {lower_matmul, {}}},
      {"Gemm", {lower_gemm, {"alpha", "beta", "transA", "transB"}}},
      {"Conv", {lower_conv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}}},
      {"BatchNormalization", {lower_batch_norm, {"epsilon", "momentum", "training_mode"}}},
      {"LayerNormalization", {lower_layer_norm, {"axis", "epsilon", "stash_type"}}},
      {"GlobalAveragePool", {lower_global_avg_pool, {}}},
      {"GlobalMaxPool", {lower_pool, {}}},
      {"MaxPool",
       {lower_pool,
        {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}}},
      {"AveragePool",
       {lower_pool, {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"}}},
      {"Softmax", {lower_softmax, {"axis"}}},
      {"LogSoftmax", {lower_softmax, {"axis"}}},
      {"InstanceNormalization", {lower_instance_norm, {"epsilon"}}},
      {"Transpose", {lower_transpose, {"perm"}}},
      {"Reshape", {lower_reshape, {"allowzero"}}},
      {"Flatten", {lower_flatten, {"axis"}}},
      {"Squeeze", {lower_squeeze, {"axes"}}},
      {"Unsqueeze", {lower_squeeze, {"axes"}}},
      {"Concat", {lower_concat, {"axis"}}},
      {"Slice", {lower_slice, {}}},
      {"Gather", {lower_gather, {"axis"}}},
      {"Split", {lower_split, {"axis", "split", "num_outputs"}}},
  };
}

const std::map<std::string, LowerEntry>& table() {
  static const std::map<std::string, LowerEntry> t = [] {
    std::map<std::string, LowerEntry> all = structural_entries();
    all.merge(lowering::elementwise_entries());
    all.merge(lowering::reduction_entries());
    all.merge(lowering::logic_entries());
    all.merge(lowering::pad_expand_entries());
    all.merge(lowering::einsum_entries());
    all.merge(lowering::depth_space_entries());
    all.merge(lowering::conv_transpose_entries());
    all.merge(lowering::arg_max_entries());
    all.merge(lowering::trilu_entries());
    all.merge(lowering::cum_sum_entries());
    all.merge(lowering::lrn_entries());
    all.merge(lowering::group_rms_norm_entries());
    all.merge(lowering::gather_elements_entries());
    all.merge(lowering::top_k_entries());
    all.merge(lowering::resize_entries());
    all.merge(lowering::scatter_nd_entries());
    all.merge(lowering::attention_entries());
    return all;
  }();
  return t;
}

}  // namespace

namespace lowering {

bool extra_output_used(const ImportContext& cx, const NodeProto& n) {
  for (int o = 1; o < n.output_size(); ++o)
    if (!n.output(o).empty() && (!cx.consumers(n.output(o)).empty() || cx.is_graph_output(n.output(o))))
      return true;
  return false;
}

std::vector<SymDim> dims_of(const OnnxValue& v) {
  if (!v.is_const) return v.dims;
  std::vector<SymDim> d;
  for (int64_t x : v.shape) d.push_back(SymDim::of(x));
  return d;
}

// A Reshape from `src` to `dst` dims, written as the planner's patterns expect it (what --emit primitive
// writes): 0 where a dimension equals the source's at the same position, -1 for the one batch-dependent
// dimension that moved, the static size otherwise. `written_infer` is the position where the file's own
// target says -1 (-1 when none). A flatten of the trailing dimensions (every leading one kept, the rest
// merged into the last, which the file wrote -1: torch's x.flatten(2) and reshape(B, C, -1)) keeps that -1,
// as the .pth route writes flatten(2) ({0, 0, -1}, which the channels-last passes match). Either spelling
// gives the same dimension (checked below).
Status reshape_to(ImportContext& cx, const NodeProto& n, int32_t src, const std::vector<SymDim>& from,
                  const std::vector<SymDim>& to, const std::string& out_name, OnnxValue* out,
                  int written_infer) {
  std::vector<int64_t> shape;
  int inferred = 0;
  bool keep_written = false;
  for (size_t d = 0; d < to.size(); ++d) {
    if (d < from.size() && to[d] == from[d]) {
      shape.push_back(0);
    } else if (!to[d].is_static()) {
      shape.push_back(-1);
      ++inferred;
    } else {
      keep_written = keep_written || static_cast<int>(d) == written_infer;
      shape.push_back(to[d].c);
    }
  }
  if (inferred > 1)
    return cx.unsupported_node(
        n, "a reshape to " + sym_dims_str(to) + " moves the batch into several dimensions");
  // written_infer >= 0 first: with no written -1 (-1) and an empty target (a rank-0 reshape, which the op
  // refuses), the position test alone held and shape.end() - 1 pointed before the empty shape.
  const bool flatten = written_infer >= 0 && written_infer == static_cast<int>(to.size()) - 1 &&
                       to.size() < from.size() &&
                       std::all_of(shape.begin(), shape.end() - 1, [](int64_t v) { return v == 0; });
  if (inferred == 0 && keep_written && flatten) shape.back() = -1;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kReshape, ReshapeAttrs{shape}, {src}, out_name, out));
  if (out->dims != to)
    return cx.bad_node(n, "reshape to " + sym_dims_str(to) + " produced " + sym_dims_str(out->dims));
  return Status::Ok();
}

Status norm_epsilon(ImportContext& cx, const NodeProto& n, float* eps) {
  *eps = cx.attr_float(n, "epsilon", 1e-5f);
  if (!std::isfinite(*eps) || *eps < 0.0f)
    return cx.bad_node(n, "epsilon must be finite and >= 0, got " + std::to_string(*eps));
  return Status::Ok();
}

Status tensor_of(ImportContext& cx, const NodeProto& n, int i, int32_t* t) {
  OnnxValue* v;
  VITRT_RETURN_IF_ERROR(cx.input(n, i, &v));
  return cx.ir_tensor(v, n.input(i), t).with_context(cx.where(n));
}

Status emit(ImportContext& cx, const NodeProto& n, OpType type, OpAttrs attrs, std::vector<int32_t> inputs,
            const std::string& out_name) {
  OnnxValue out;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, type, std::move(attrs), std::move(inputs), out_name, &out));
  cx.set(out_name, std::move(out));
  return Status::Ok();
}

}  // namespace lowering

std::vector<std::string> lowered_ops() {
  std::vector<std::string> ops;
  for (const auto& kv : table()) ops.push_back(kv.first);
  return ops;
}

Status lower_node(ImportContext& cx, int index) {
  const NodeProto& n = cx.onnx_graph().node(index);
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return cx.unsupported_node(n, "operator domain '" + n.domain() + "' is not supported");
  const auto& t = table();
  auto it = t.find(n.op_type());
  if (it == t.end())
    return cx.unsupported_node(
        n, "op type '" + n.op_type() + "' is not supported (no IR op for it yet; see docs/onnx.md)");
  for (const auto& a : n.attribute())
    if (!it->second.attrs.count(a.name()))
      return cx.unsupported_node(n, "attribute '" + a.name() + "' is not supported");
  if (n.output_size() < 1 || n.output(0).empty()) return cx.bad_node(n, "has no output");
  return it->second.fn(cx, index, n);
}

}  // namespace vitrt::convert
