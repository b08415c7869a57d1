// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SqueezeExcite (core/ir/op_attrs.h, SqueezeExciteAttrs): src [B,C,H,W], fc1_weight [Cr,C] or [Cr,C,1,1],
// fc1_bias [Cr]?, fc2_weight [C,Cr] or [C,Cr,1,1], fc2_bias [C]? -> [B,C,H,W]. Also the attribute rules
// (ops/squeeze_excite_attrs.h).
#include "ops/op_registry.h"
#include "ops/squeeze_excite_attrs.h"
#include "ops/unary_attrs.h"

namespace vitrt {

std::string squeeze_excite_attrs_problem(const SqueezeExciteAttrs& a) {
  const int act = static_cast<int>(a.activation), gate = static_cast<int>(a.gate);
  if (act < 0 || act >= kNumSqueezeActivations) return "activation " + std::to_string(act) + " is unknown";
  if (gate < 0 || gate >= kNumExciteGates) return "gate " + std::to_string(gate) + " is unknown";
  // The sigmoid gate has no parameters: as a Sigmoid Unary, both must be 0.
  const UnaryKind kind = a.gate == ExciteGate::kHardSigmoid ? UnaryKind::kHardSigmoid : UnaryKind::kSigmoid;
  const std::string why = unary_attrs_problem(UnaryAttrs{kind, a.gate_alpha, a.gate_beta});
  return why.empty() ? "" : "gate " + why;
}

namespace {

// A fully connected weight [rows, cols], also as a 1x1 convolution's [rows, cols, 1, 1].
bool is_fc_weight(const Shape& w, int64_t rows, int64_t cols) {
  if (w.rank == 2) return w[0] == rows && w[1] == cols;
  return w.rank == 4 && w[0] == rows && w[1] == cols && w[2] == 1 && w[3] == 1;
}

}  // namespace

Status infer_squeeze_excite(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  auto fail = [](const std::string& what) { return bad_model("SqueezeExcite: " + what); };
  const std::string why = squeeze_excite_attrs_problem(std::get<SqueezeExciteAttrs>(node.attrs));
  if (!why.empty()) return fail(why);
  auto optional = [&](int i) { return i < num_src ? src[i] : nullptr; };
  const Shape& x = *src[0];
  if (x.rank != 4) return fail("src must be [B,C,H,W], got " + x.str());
  const int64_t c = x[1];
  const std::string cs = std::to_string(c);
  // Input 3 is required but follows an optional one, so the schema demands only inputs 0 and 1.
  if (!optional(3)) return fail("fc2_weight is required");
  const Shape& w1 = *src[1];
  const int64_t cr = w1.rank >= 1 ? w1[0] : -1;
  if (cr < 1 || !is_fc_weight(w1, cr, c))
    return fail("fc1_weight must be [Cr," + cs + "] or [Cr," + cs + ",1,1], got " + w1.str());
  const std::string crs = std::to_string(cr);
  if (optional(2) && *src[2] != Shape{cr})
    return fail("fc1_bias must be [" + crs + "], got " + src[2]->str());
  if (!is_fc_weight(*src[3], c, cr))
    return fail("fc2_weight must be [" + cs + "," + crs + "] or [" + cs + "," + crs + ",1,1], got " +
                src[3]->str());
  if (optional(4) && *src[4] != Shape{c}) return fail("fc2_bias must be [" + cs + "], got " + src[4]->str());
  dst[0] = x;
  return Status::Ok();
}

}  // namespace vitrt
