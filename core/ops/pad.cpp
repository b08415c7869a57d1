// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Pad (ONNX Pad; core/ir/op_attrs.h, PadAttrs): each axis grows by its leading and trailing pads. The pads
// come from files: sizes are computed in checked int64.
#include "common/checked_math.h"
#include "ops/op_registry.h"

namespace vitrt {

Status infer_pad(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<PadAttrs>(node.attrs);
  const Shape& x = *src[0];
  const int mode = static_cast<int>(a.mode);
  if (mode < 0 || mode > 2) return bad_model("Pad: unknown mode " + std::to_string(mode));
  if (a.pads.size() != 2 * static_cast<size_t>(x.rank))
    return bad_model("Pad: " + std::to_string(a.pads.size()) + " pads for " + x.str() +
                     " (needs 2 per axis)");
  Shape out = x;
  for (int d = 0; d < x.rank; ++d) {
    const int64_t before = a.pads[d], after = a.pads[d + x.rank];
    if (before < 0 || after < 0)
      return bad_model("Pad: pads " + std::to_string(before) + ", " + std::to_string(after) + " of axis " +
                       std::to_string(d) + " must be non-negative");
    // PyTorch's reflect: the mirror never repeats the edge, so it needs pad < size.
    if (a.mode == PadMode::kReflect && (before >= x[d] || after >= x[d]))
      return bad_model("Pad: reflect pads " + std::to_string(before) + ", " + std::to_string(after) +
                       " of axis " + std::to_string(d) + " must be smaller than its size in " + x.str());
    if (!checked_add(x[d], before, &out[d]) || !checked_add(out[d], after, &out[d]))
      return bad_model("Pad: axis " + std::to_string(d) + " of " + x.str() + " overflows");
  }
  dst[0] = out;
  return Status::Ok();
}

}  // namespace vitrt
