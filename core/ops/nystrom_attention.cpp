// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// NystromAttention (core/ir/op_attrs.h, NystromAttentionAttrs): q, k, v [B,N,C], v_conv_weight [h,1,ks,1]?
// -> [B,N,C]; its attribute rules and geometry (ops/nystrom_attention_geometry.h).
#include <cmath>

#include "ops/nystrom_attention_geometry.h"
#include "ops/op_registry.h"

namespace vitrt {

std::string nystrom_attrs_problem(const NystromAttentionAttrs& a) {
  const int init = static_cast<int>(a.init);
  if (a.num_heads < 1) return "num_heads " + std::to_string(a.num_heads) + " must be >= 1";
  if (a.landmarks < 1) return "landmarks " + std::to_string(a.landmarks) + " must be >= 1";
  if (!std::isfinite(a.q_scale) || !std::isfinite(a.k_scale))
    return "q_scale " + std::to_string(a.q_scale) + " and k_scale " + std::to_string(a.k_scale) +
           " must be finite";
  if (init < 0 || init >= kNumNystromInits) return "init " + std::to_string(init) + " is unknown";
  if (a.iterations < 0 || a.iterations > kMaxNystromIterations)
    return "iterations " + std::to_string(a.iterations) + " must be in [0, " +
           std::to_string(kMaxNystromIterations) + "]";
  return "";
}

Status decode_nystrom_geometry(const NystromAttentionAttrs& a, const Shape* const* src, int num_src,
                               NystromGeometry* out) {
  auto fail = [](const std::string& what) { return bad_model("NystromAttention: " + what); };
  const std::string why = nystrom_attrs_problem(a);
  if (!why.empty()) return fail(why);
  if (num_src < 3 || !src[0] || !src[1] || !src[2]) return fail("q, k and v are required");
  const Shape& q = *src[0];
  if (q.rank != 3) return fail("q must be [B,N,C], got " + q.str());
  if (*src[1] != q || *src[2] != q)
    return fail("k and v must be q's shape " + q.str() + ", got " + src[1]->str() + " and " + src[2]->str());
  NystromGeometry g{};
  g.batch = q[0];
  g.n = q[1];
  g.c = q[2];
  g.heads = a.num_heads;
  g.m = a.landmarks;
  if (g.c % g.heads != 0 || g.c == 0)
    return fail("C = " + std::to_string(g.c) + " must be a positive multiple of num_heads " +
                std::to_string(g.heads));
  g.d = g.c / g.heads;
  if (g.m > g.n)
    return fail("landmarks " + std::to_string(g.m) + " must not exceed the " + std::to_string(g.n) +
                " tokens");
  g.ks = 0;
  if (num_src > 3 && src[3]) {
    const Shape& w = *src[3];
    if (w.rank != 4 || w[0] != g.heads || w[1] != 1 || w[3] != 1 || w[2] < 1 || w[2] % 2 == 0)
      return fail("v_conv_weight must be [" + std::to_string(g.heads) + ",1,ks,1] with ks odd, got " +
                  w.str());
    g.ks = w[2];
  }
  *out = g;
  return Status::Ok();
}

Status infer_nystrom_attention(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  NystromGeometry g;
  VITRT_RETURN_IF_ERROR(
      decode_nystrom_geometry(std::get<NystromAttentionAttrs>(node.attrs), src, num_src, &g));
  dst[0] = *src[0];
  return Status::Ok();
}

}  // namespace vitrt
