// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// KernelizedAttention (core/ir/op_attrs.h, KernelizedAttentionAttrs; docs/linear_attention.md): q, k
// [B,N,h·dk], v [B,N,h·dv] -> [B,N,h·dv]. Also the attribute rules and the geometry
// (ops/kernelized_attention_attrs.h).
#include <cmath>

#include "ops/kernelized_attention_attrs.h"
#include "ops/op_registry.h"

namespace vitrt {

const char* kernelized_kind_name(KernelizedKind kind) {
  switch (kind) {
    case KernelizedKind::kEluNormalized:
      return "EluNormalized";
    case KernelizedKind::kEluScaled:
      return "EluScaled";
    case KernelizedKind::kSoftmaxPair:
      return "SoftmaxPair";
  }
  return "unknown";
}

std::string kernelized_attention_attrs_problem(const KernelizedAttentionAttrs& a) {
  const int kind = static_cast<int>(a.kind);
  if (kind < 0 || kind >= kNumKernelizedKinds) return "kind " + std::to_string(kind) + " is unknown";
  if (a.num_heads < 1) return "heads " + std::to_string(a.num_heads) + " must be >= 1";
  const std::string name = kernelized_kind_name(a.kind);
  const bool uses_eps = a.kind == KernelizedKind::kEluNormalized;
  const bool uses_scale = a.kind == KernelizedKind::kEluScaled;
  if (uses_eps && !(std::isfinite(a.eps) && a.eps >= 0.0f))
    return name + "'s eps " + std::to_string(a.eps) + " must be finite and >= 0";
  if (!uses_eps && a.eps != 0.0f) return name + "'s eps " + std::to_string(a.eps) + " must be 0 (unused)";
  if (uses_scale && !(std::isfinite(a.scale) && a.scale > 0.0f))
    return name + "'s scale " + std::to_string(a.scale) + " must be finite and > 0";
  if (!uses_scale && a.scale != 1.0f)
    return name + "'s scale " + std::to_string(a.scale) + " must be 1 (unused)";
  return "";
}

Status decode_kernelized_geometry(const KernelizedAttentionAttrs& a, const Shape& q, const Shape& k,
                                  const Shape& v, KernelizedGeometry* g) {
  const std::string why = kernelized_attention_attrs_problem(a);
  if (!why.empty()) return bad_model(why);
  if (q.rank != 3) return bad_model("q must be [B,N,heads*dk], got " + q.str());
  if (k != q) return bad_model("k must have q's shape " + q.str() + ", got " + k.str());
  if (v.rank != 3 || v[0] != q[0] || v[1] != q[1])
    return bad_model("v must be [" + std::to_string(q[0]) + "," + std::to_string(q[1]) + ",heads*dv], got " +
                     v.str());
  const int64_t h = a.num_heads;
  if (q[2] < h || q[2] % h != 0 || v[2] < h || v[2] % h != 0)
    return bad_model("heads " + std::to_string(h) + " must divide q's channels " + std::to_string(q[2]) +
                     " and v's " + std::to_string(v[2]));
  g->batch = q[0];
  g->n = q[1];
  g->heads = h;
  g->dk = q[2] / h;
  g->dv = v[2] / h;
  return Status::Ok();
}

Status infer_kernelized_attention(const Node& node, const Shape* const* src, int, Shape* dst) {
  KernelizedGeometry g;
  const Status s = decode_kernelized_geometry(std::get<KernelizedAttentionAttrs>(node.attrs), *src[0],
                                              *src[1], *src[2], &g);
  if (!s.ok()) return bad_model("KernelizedAttention: " + s.message());
  dst[0] = *src[2];
  return Status::Ok();
}

}  // namespace vitrt
