// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Reshape: 0 copies the source dim at the same position, -1 is inferred from the element count.
#include "common/checked_math.h"
#include "ops/op_registry.h"

namespace vitrt {

Status infer_reshape(const Node& node, const Shape* const* src, int, Shape* dst) {
  const auto& a = std::get<ReshapeAttrs>(node.attrs);
  const Shape& x = *src[0];
  if (a.shape.empty() || a.shape.size() > static_cast<size_t>(kMaxRank))
    return bad_model("Reshape: bad target rank");
  Shape out;
  out.rank = static_cast<int>(a.shape.size());
  int infer_at = -1;
  int64_t known = 1;
  for (int i = 0; i < out.rank; ++i) {
    int64_t v = a.shape[i];
    if (v == 0) {
      if (i >= x.rank) return bad_model("Reshape: 0 at position " + std::to_string(i) + " beyond " + x.str());
      v = x[i];
    }
    if (v == -1) {
      if (infer_at >= 0) return bad_model("Reshape: more than one -1");
      infer_at = i;
      continue;
    }
    if (v < 1) return bad_model("Reshape: invalid dim " + std::to_string(v));
    out[i] = v;
    // Checked: a product that wraps modulo 2^64 could otherwise equal the source's element count.
    if (!checked_mul(known, v, &known) || known > kMaxTensorElements)
      return bad_model("Reshape: target shape of " + x.str() + " holds more than " +
                       std::to_string(kMaxTensorElements) + " elements");
  }
  int64_t total = 0;
  if (!checked_numel(x, &total)) return bad_model("Reshape: invalid source shape " + x.str());
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) return bad_model("Reshape: cannot infer -1 for " + x.str());
    out[infer_at] = total / known;
  }
  int64_t produced = 0;
  if (!checked_numel(out, &produced) || produced != total)
    return bad_model("Reshape: " + x.str() + " cannot become " + out.str());
  dst[0] = out;
  return Status::Ok();
}

}  // namespace vitrt
