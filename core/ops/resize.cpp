// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Resize (ONNX Resize; core/ir/op_attrs.h, ResizeAttrs): the last sizes.size() axes take the stored output
// lengths, the leading ones are kept.
#include <cmath>

#include "common/checked_math.h"
#include "ops/op_registry.h"
#include "ops/resize_attrs.h"

namespace vitrt {

std::string resize_attrs_problem(const ResizeAttrs& a) {
  const int mode = static_cast<int>(a.mode), coord = static_cast<int>(a.coordinate),
            nearest = static_cast<int>(a.nearest);
  if (mode < 0 || mode >= kNumResizeModes) return "unknown mode " + std::to_string(mode);
  if (coord < 0 || coord >= kNumResizeCoordinates)
    return "unknown coordinate transformation " + std::to_string(coord);
  if (nearest < 0 || nearest >= kNumResizeNearest)
    return "unknown nearest rounding " + std::to_string(nearest);
  if (a.sizes.empty() || a.sizes.size() > static_cast<size_t>(kMaxResizeAxes))
    return std::to_string(a.sizes.size()) + " resized axes (1 to " + std::to_string(kMaxResizeAxes) + ")";
  if (a.steps.size() != a.sizes.size())
    return std::to_string(a.steps.size()) + " steps for " + std::to_string(a.sizes.size()) + " resized axes";
  if (a.scales.size() != a.sizes.size())
    return std::to_string(a.scales.size()) + " scales for " + std::to_string(a.sizes.size()) +
           " resized axes";
  for (size_t i = 0; i < a.sizes.size(); ++i) {
    if (!(std::isfinite(a.scales[i]) && a.scales[i] > 0.0))
      return "scale " + std::to_string(a.scales[i]) + " (finite, > 0)";
    if (a.sizes[i] < 1 || a.sizes[i] > kMaxTensorElements)
      return "output length " + std::to_string(a.sizes[i]) + " (1 to " + std::to_string(kMaxTensorElements) +
             ")";
    if (!(std::isfinite(a.steps[i]) && a.steps[i] >= 0.0f))
      return "step " + std::to_string(a.steps[i]) + " (finite, >= 0)";
  }
  if (!std::isfinite(a.cubic_a)) return "cubic_a must be finite";
  return "";
}

Status infer_resize(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<ResizeAttrs>(node.attrs);
  const std::string why = resize_attrs_problem(a);
  if (!why.empty()) return bad_model("Resize: " + why);
  const Shape& x = *src[0];
  const int k = static_cast<int>(a.sizes.size());
  if (k > x.rank)
    return bad_model("Resize: " + std::to_string(k) + " resized axes for the rank-" + std::to_string(x.rank) +
                     " input " + x.str());
  Shape out = x;
  for (int i = 0; i < k; ++i) out[x.rank - k + i] = a.sizes[static_cast<size_t>(i)];
  dst[0] = out;
  return Status::Ok();
}

}  // namespace vitrt
