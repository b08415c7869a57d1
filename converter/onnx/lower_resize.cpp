// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Resize (docs/onnx.md) becomes the IR's Resize over the trailing axes that change: every axis before the
// first changed one must keep its length and coordinates (N and C of an NCHW image), at most three axes are
// resized, never the batch. Each resized axis stores its output length and its float step (input positions
// per output position): 1/scale (float) where scales are given, in/out (float) where sizes are, and for
// align_corners (in − 1)/(L − 1) with L the output length (ONNX's reference takes in·scale there when scales
// are given); and ONNX's scale, which nearest's coordinates divide by. A Resize that changes nothing is
// removed (exact).
#include <cmath>

#include "common/checked_math.h"
#include "onnx/lower_common.h"
#include "ops/op_registry.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

struct AxisPlan {
  int64_t in = 0, out = 0;
  float step = 1.0f;
  double scale = 1.0;  // ONNX's: as given, or out/in
};

Status lower_resize(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  static const std::map<std::string, ResizeMode> modes = {
      {"nearest", ResizeMode::kNearest}, {"linear", ResizeMode::kLinear}, {"cubic", ResizeMode::kCubic}};
  static const std::map<std::string, ResizeCoordinate> coords = {
      {"half_pixel", ResizeCoordinate::kHalfPixel},
      {"pytorch_half_pixel", ResizeCoordinate::kPytorchHalfPixel},
      {"align_corners", ResizeCoordinate::kAlignCorners},
      {"asymmetric", ResizeCoordinate::kAsymmetric},
      {"tf_half_pixel_for_nn", ResizeCoordinate::kTfHalfPixelForNn}};
  static const std::map<std::string, ResizeNearest> nearests = {
      {"round_prefer_floor", ResizeNearest::kRoundPreferFloor},
      {"round_prefer_ceil", ResizeNearest::kRoundPreferCeil},
      {"floor", ResizeNearest::kFloor},
      {"ceil", ResizeNearest::kCeil}};
  ResizeAttrs a;
  const std::string mode = cx.attr_string(n, "mode", "nearest");
  const std::string coord = cx.attr_string(n, "coordinate_transformation_mode", "half_pixel");
  const std::string nearest = cx.attr_string(n, "nearest_mode", "round_prefer_floor");
  if (!modes.count(mode)) return cx.unsupported_node(n, "mode '" + mode + "'");
  if (coord == "tf_crop_and_resize")
    return cx.unsupported_node(n, "coordinate_transformation_mode 'tf_crop_and_resize' (cropping to a roi)");
  if (!coords.count(coord)) return cx.unsupported_node(n, "coordinate_transformation_mode '" + coord + "'");
  if (!nearests.count(nearest)) return cx.unsupported_node(n, "nearest_mode '" + nearest + "'");
  a.mode = modes.at(mode);
  a.coordinate = coords.at(coord);
  a.nearest = nearests.at(nearest);
  a.cubic_a = cx.attr_float(n, "cubic_coeff_a", -0.75f);
  if (!std::isfinite(a.cubic_a)) return cx.bad_node(n, "cubic_coeff_a must be finite");
  const int64_t exclude = cx.attr_int(n, "exclude_outside", 0);
  if (exclude != 0 && exclude != 1) return cx.bad_node(n, "exclude_outside " + std::to_string(exclude));
  a.exclude_outside = exclude == 1;
  if (cx.attr_int(n, "antialias", 0) != 0)
    return cx.unsupported_node(n, "antialias 1 (opset 18; the downsampling filter is not implemented)");
  const std::string policy = cx.attr_string(n, "keep_aspect_ratio_policy", "stretch");

  const std::vector<SymDim> dims = dims_of(*x);
  const int rank = static_cast<int>(dims.size());
  // Opset 18's `axes`: the scales or sizes name these axes only; the others keep their length.
  std::vector<int64_t> axes = cx.attr_ints(n, "axes");
  if (axes.empty())
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  std::vector<bool> named(static_cast<size_t>(rank), false);
  for (int64_t& ax : axes) {
    int norm;
    if (!normalize_axis(ax, rank, &norm) || named[static_cast<size_t>(norm)])
      return cx.bad_node(
          n, "axes " + int_dims_str(cx.attr_ints(n, "axes")) + " for rank " + std::to_string(rank));
    named[static_cast<size_t>(norm)] = true;
    ax = norm;
  }

  std::vector<float> scales;
  std::vector<SymDim> sizes;
  if (cx.has_input(n, 2)) {
    OnnxValue* s;
    VITRT_RETURN_IF_ERROR(cx.input(n, 2, &s));
    if (!s->is_const || s->kind != ConstKind::kFloat)
      return cx.unsupported_node(n, "scales computed from data, not known at import");
    scales = s->f;
  }
  if (cx.has_input(n, 3)) {
    OnnxValue* s;
    VITRT_RETURN_IF_ERROR(cx.input(n, 3, &s));
    if (!s->is_const || s->kind != ConstKind::kInt)
      return cx.unsupported_node(n, "sizes computed from data, not known at import");
    sizes = s->i;
  }
  if (scales.empty() == sizes.empty())
    return cx.bad_node(n, "needs exactly one of scales and sizes (non-empty)");
  const size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != axes.size())
    return cx.bad_node(n, std::to_string(given) + (scales.empty() ? " sizes" : " scales") + " for " +
                              std::to_string(axes.size()) + " axes");
  if (!sizes.empty() && policy != "stretch")
    return cx.unsupported_node(n, "keep_aspect_ratio_policy '" + policy + "'");

  std::vector<AxisPlan> plan(static_cast<size_t>(rank));
  int first_changed = rank;
  for (int d = 0; d < rank; ++d) {
    AxisPlan& p = plan[static_cast<size_t>(d)];
    size_t k = 0;
    while (k < axes.size() && axes[k] != d) ++k;
    if (k == axes.size()) continue;  // not named: kept
    if (!dims[d].is_static()) {
      const bool same = scales.empty() ? sizes[k] == dims[d] : scales[k] == 1.0f;
      if (!same) return cx.unsupported_node(n, "resizes the batch axis");
      continue;
    }
    p.in = dims[d].c;
    double length = 0;  // ONNX's output length before flooring (align_corners reads it)
    if (!scales.empty()) {
      const double s = scales[k];
      if (!(s > 0.0) || !std::isfinite(s))
        return cx.bad_node(n, "scale " + std::to_string(scales[k]) + " (must be > 0)");
      length = s * static_cast<double>(p.in);
      if (!(std::floor(length) >= 1.0 && std::floor(length) <= static_cast<double>(kMaxTensorElements)))
        return cx.bad_node(n, "scale " + std::to_string(scales[k]) + " gives axis " + std::to_string(d) +
                                  " of length " + std::to_string(p.in) +
                                  " an output length outside 1 .. 2^32");
      p.out = static_cast<int64_t>(std::floor(length));
      p.step = static_cast<float>(1.0 / s);
      p.scale = s;
    } else {
      if (!sizes[k].is_static() || sizes[k].c < 1 || sizes[k].c > kMaxTensorElements)
        return cx.bad_node(n, "size " + sizes[k].str() + " for axis " + std::to_string(d));
      p.out = sizes[k].c;
      length = static_cast<double>(p.out);
      p.step = static_cast<float>(p.in) / static_cast<float>(p.out);
      p.scale = static_cast<double>(p.out) / static_cast<double>(p.in);
    }
    if (a.coordinate == ResizeCoordinate::kAlignCorners) {
      if (!scales.empty())
        p.step = length > 1.0 ? static_cast<float>(static_cast<double>(p.in - 1) / (length - 1.0)) : 0.0f;
      else
        p.step = p.out > 1 ? static_cast<float>(p.in - 1) / static_cast<float>(p.out - 1) : 0.0f;
    }
    // As the kernels' copied axes (resize_taps.cpp): a length-1 axis that stays length 1 has one index.
    const bool same = p.out == p.in &&
                      (p.in == 1 || (p.step == 1.0f && a.coordinate != ResizeCoordinate::kTfHalfPixelForNn));
    if (!same && first_changed == rank) first_changed = d;
  }
  if (first_changed == rank) {  // every axis keeps its length and coordinates: exactly the input
    cx.alias(n.output(0), *x);
    return Status::Ok();
  }
  for (int d = first_changed; d < rank; ++d)
    if (!dims[d].is_static()) return cx.unsupported_node(n, "resizes the batch axis");
  if (first_changed == 0 || rank - first_changed > kMaxResizeAxes)
    return cx.unsupported_node(n, "resizes axes " + std::to_string(first_changed) + " .. " +
                                      std::to_string(rank - 1) + " of " + sym_dims_str(dims) +
                                      " (at most the last " + std::to_string(kMaxResizeAxes) +
                                      ", never the batch)");
  std::vector<SymDim> to = dims;
  for (int d = first_changed; d < rank; ++d) {
    const AxisPlan& p = plan[static_cast<size_t>(d)];
    const bool named_axis = p.in != 0;
    a.sizes.push_back(named_axis ? p.out : dims[d].c);
    a.steps.push_back(named_axis ? p.step : 1.0f);
    a.scales.push_back(named_axis ? p.scale : 1.0);
    to[d] = SymDim::of(a.sizes.back());
  }
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  return emit(cx, n, OpType::kResize, a, {t}, n.output(0));
}

}  // namespace

std::map<std::string, Entry> resize_entries() {
  return {
      {"Resize",
       {lower_resize,
        {"mode", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value",
         "nearest_mode", "antialias", "axes", "keep_aspect_ratio_policy"}}},
  };
}

}  // namespace vitrt::convert::lowering
