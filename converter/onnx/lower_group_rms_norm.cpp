// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// GroupNormalization (opsets 18 and 21) and RMSNormalization (opset 23), lowered to IR ops the other routes
// already use (docs/onnx.md), computing in float32 (stash_type 1, the default; any other is refused).
// - GroupNormalization: x [N,C,D...] reshaped to [N,G,(C/G)·D...], InstanceNorm over each group (the
//   statistics torch's group_norm takes: mean and biased variance of the group), reshaped back. Opset 18's
//   scale and bias hold one value per group and go into the InstanceNorm; opset 21's hold one per channel
//   (torch.nn.GroupNorm's weight and bias) and follow as Mul and Add by [C,1,...] constants, the
//   InstanceNorm's own scale 1 and bias 0. Scale and bias must be constants (they are weights).
// - RMSNormalization: ONNX's reference steps, x / sqrt(mean(x², axes axis..) + epsilon) · scale, as Mul,
//   ReduceMean (keepdims), Add, Unary Sqrt, Div and Mul; the scale broadcasts to the normalised axes.
#include <cmath>
#include <string>
#include <vector>

#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status float32_stash(ImportContext& cx, const NodeProto& n) {
  const int64_t stash = cx.attr_int(n, "stash_type", 1);
  if (stash != 1)
    return cx.unsupported_node(n, "stash_type " + std::to_string(stash) +
                                      " (vitrt computes the statistics in float32, stash_type 1)");
  return Status::Ok();
}

// Input i as a float constant of `want` values, as a weight must be.
Status weight_values(ImportContext& cx, const NodeProto& n, int i, int64_t want, const char* what,
                     const std::vector<float>** values) {
  OnnxValue* v;
  VITRT_RETURN_IF_ERROR(cx.input(n, i, &v));
  if (!v->is_const) return cx.unsupported_node(n, std::string("its ") + what + " is computed, not a weight");
  if (v->kind != ConstKind::kFloat || v->numel() != want || v->shape.size() != 1)
    return cx.bad_node(n, std::string(what) + " must hold " + std::to_string(want) +
                              " float values (shape [" + std::to_string(want) + "]), got shape " +
                              int_dims_str(v->shape));
  *values = &v->f;
  return Status::Ok();
}

Status lower_group_norm(ImportContext& cx, int, const NodeProto& n) {
  if (cx.opset() < 18) return cx.bad_node(n, "GroupNormalization is an operator of opset 18 and later");
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  const std::vector<SymDim> xd = dims_of(*x);
  if (xd.size() < 3)
    return cx.bad_node(n, "input of rank " + std::to_string(xd.size()) + ", expected [N,C,D1,...]");
  if (!cx.attr(n, "num_groups")) return cx.bad_node(n, "has no 'num_groups' attribute (it is required)");
  const int64_t groups = cx.attr_int(n, "num_groups", 0);
  int64_t rest = 1;  // (C/G)·D1·D2·...
  for (size_t d = 1; d < xd.size(); ++d)
    if (!xd[d].is_static() || !checked_mul(rest, xd[d].c, &rest))
      return cx.unsupported_node(n, "only the batch dimension may be dynamic");
  const int64_t channels = xd[1].c;
  if (groups < 1 || channels % groups != 0)
    return cx.bad_node(n, "num_groups " + std::to_string(groups) + " does not divide the " +
                              std::to_string(channels) + " channels");
  float eps;
  VITRT_RETURN_IF_ERROR(norm_epsilon(cx, n, &eps));
  VITRT_RETURN_IF_ERROR(float32_stash(cx, n));
  const bool per_channel = cx.opset() >= 21;
  const std::vector<float>*scale, *bias;
  VITRT_RETURN_IF_ERROR(weight_values(cx, n, 1, per_channel ? channels : groups, "scale", &scale));
  VITRT_RETURN_IF_ERROR(weight_values(cx, n, 2, per_channel ? channels : groups, "bias", &bias));
  const std::string out = n.output(0);
  int32_t xt, group_scale, group_bias;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &xt));
  if (per_channel) {
    group_scale = cx.add_constant(out + ".one", {groups}, std::vector<float>(groups, 1.0f));
    group_bias = cx.add_constant(out + ".zero", {groups}, std::vector<float>(groups, 0.0f));
  } else {
    VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &group_scale));
    VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 2, &group_bias));
  }
  OnnxValue v;
  VITRT_RETURN_IF_ERROR(
      reshape_to(cx, n, xt, xd, {xd[0], SymDim::of(groups), SymDim::of(rest / groups)}, out + ".groups", &v));
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kInstanceNorm, InstanceNormAttrs{eps},
                                  {v.tensor, group_scale, group_bias}, out + ".normalised", &v));
  VITRT_RETURN_IF_ERROR(reshape_to(cx, n, v.tensor, v.dims, xd, per_channel ? out + ".ungrouped" : out, &v));
  if (per_channel) {
    std::vector<int64_t> shape(xd.size() - 1, 1);  // [C,1,...,1]: one value per channel
    shape[0] = channels;
    const int32_t s = cx.add_constant(out + ".scale", shape, *scale);
    const int32_t b = cx.add_constant(out + ".bias", shape, *bias);
    VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kMul, NoAttrs{}, {v.tensor, s}, out + ".scaled", &v));
    VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kAdd, NoAttrs{}, {v.tensor, b}, out, &v));
  }
  cx.set(out, std::move(v));
  return Status::Ok();
}

Status lower_rms_norm(ImportContext& cx, int, const NodeProto& n) {
  if (cx.opset() < 23) return cx.bad_node(n, "RMSNormalization is an operator of opset 23 and later");
  OnnxValue *x, *scale;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &scale));
  const int64_t rank = x->rank();
  int64_t axis = cx.attr_int(n, "axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return cx.bad_node(n, "axis " + std::to_string(cx.attr_int(n, "axis", -1)) +
                              " is out of range for rank " + std::to_string(rank));
  if (axis == 0) return cx.unsupported_node(n, "it normalises over the batch axis");
  float eps;
  VITRT_RETURN_IF_ERROR(norm_epsilon(cx, n, &eps));
  VITRT_RETURN_IF_ERROR(float32_stash(cx, n));
  const std::vector<SymDim> xd = dims_of(*x), sd = dims_of(*scale);
  bool fits = sd.size() <= static_cast<size_t>(rank - axis);
  for (size_t i = 0; fits && i < sd.size(); ++i)
    fits = sd[sd.size() - 1 - i] == SymDim::of(1) || sd[sd.size() - 1 - i] == xd[xd.size() - 1 - i];
  if (!fits) return cx.bad_node(n, "scale does not broadcast to the normalised axes");
  std::vector<int32_t> axes;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(static_cast<int32_t>(d));
  const std::string out = n.output(0);
  int32_t xt, st;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &xt));
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &st));
  const int32_t e = cx.add_constant(out + ".epsilon", {1}, {eps});
  OnnxValue v;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kMul, NoAttrs{}, {xt, xt}, out + ".squared", &v));
  VITRT_RETURN_IF_ERROR(
      cx.add_op(n, OpType::kReduceMean, ReduceMeanAttrs{axes, true}, {v.tensor}, out + ".mean_square", &v));
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kAdd, NoAttrs{}, {v.tensor, e}, out + ".plus_epsilon", &v));
  VITRT_RETURN_IF_ERROR(
      cx.add_op(n, OpType::kUnary, UnaryAttrs{UnaryKind::kSqrt, 0.0f, 0.0f}, {v.tensor}, out + ".rms", &v));
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kDiv, NoAttrs{}, {xt, v.tensor}, out + ".normalised", &v));
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kMul, NoAttrs{}, {v.tensor, st}, out, &v));
  cx.set(out, std::move(v));
  return Status::Ok();
}

}  // namespace

std::map<std::string, Entry> group_rms_norm_entries() {
  return {{"GroupNormalization", {lower_group_norm, {"num_groups", "epsilon", "stash_type"}}},
          {"RMSNormalization", {lower_rms_norm, {"axis", "epsilon", "stash_type"}}}};
}

}  // namespace vitrt::convert::lowering
