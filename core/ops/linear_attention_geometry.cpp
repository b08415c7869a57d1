// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "ops/linear_attention_geometry.h"

#include <string>

namespace vitrt {

Status decode_linear_attention_geometry(const LinearAttentionAttrs& a, const Shape* const* src, int num_src,
                                        LinearAttentionGeometry* out) {
  if (num_src < 6) return bad_model("expects 6 inputs");
  for (int i = 0; i < 6; ++i)
    if (!src[i]) return bad_model("input " + std::to_string(i) + " is missing");
  const Shape& q = *src[0];
  const Shape& v = *src[1];
  if (q.rank != 3 || v != q)
    return bad_model("q and v must be the same [B,N,C], got " + q.str() + " and " + v.str());
  if (a.num_heads < 1 || q[2] % a.num_heads != 0)
    return bad_model("" + std::to_string(q[2]) + " channels do not split into " +
                     std::to_string(a.num_heads) + " heads");
  if (a.height < 1 || a.width < 1 || static_cast<int64_t>(a.height) * a.width != q[1])
    return bad_model("token grid " + std::to_string(a.height) + "x" + std::to_string(a.width) +
                     " does not hold " + std::to_string(q[1]) + " tokens");
  LinearAttentionGeometry g{};
  g.batch = q[0];
  g.n = q[1];
  g.c = q[2];
  g.heads = a.num_heads;
  g.d = g.c / g.heads;
  g.height = a.height;
  g.width = a.width;
  g.r = a.landmark_ratio;
  if (g.r < 1 || g.height / g.r < 1 || g.width / g.r < 1)
    return bad_model("landmark ratio " + std::to_string(g.r) + " leaves no landmark on a " +
                     std::to_string(a.height) + "x" + std::to_string(a.width) + " grid");
  g.m_h = g.height / g.r;
  g.m_w = g.width / g.r;
  g.m = g.m_h * g.m_w;
  const Shape landmark_conv{g.d, g.d, g.r, g.r};
  if (*src[2] != landmark_conv)
    return bad_model("landmark conv weight must be " + landmark_conv.str() + ", got " + src[2]->str());
  if (*src[3] != Shape{g.d} || *src[4] != Shape{g.d})
    return bad_model("landmark LayerNorm parameters must be [" + std::to_string(g.d) + "]");
  const Shape& vc = *src[5];
  if (vc.rank != 4 || vc[0] != a.num_heads || vc[1] != 1 || vc[2] != vc[3] || vc[2] % 2 == 0)
    return bad_model("V conv weight must be [" + std::to_string(a.num_heads) + ",1,k,k] with k odd, got " +
                     vc.str());
  g.k = vc[2];
  *out = g;
  return Status::Ok();
}

Status check_linear_attention_attrs(const LinearAttentionAttrs& a) {
  if (a.kernel != AttentionKernel::kGaussian) return unsupported("unknown attention kernel");
  if (a.landmarks != LandmarkSource::kStridedConvLnGelu) return unsupported("unknown landmark source");
  if (a.pinv != PseudoInverse::kNewtonScaled && a.pinv != PseudoInverse::kNewtonLegacy)
    return unsupported("unknown pseudo-inverse");
  if (a.newton_iterations < 0) return bad_model("negative Newton iteration count");
  if (!(a.landmark_ln_eps >= 0.0f)) return bad_model("landmark LayerNorm eps must be >= 0");
  return Status::Ok();
}

}  // namespace vitrt
