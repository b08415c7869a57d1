// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The op semantics every backend shares (core/ops): where a SoftmaxAttention's Q, K and V sit for each input
// layout, and a LinearAttention's geometry, with the disagreements each one rejects.
#include <doctest/doctest.h>

#include "ops/linear_attention_geometry.h"
#include "ops/softmax_attention_layout.h"

using namespace vitrt;

namespace {

SoftmaxAttentionAttrs attention(AttentionInputs layout, int heads) {
  SoftmaxAttentionAttrs a;
  a.inputs = layout;
  a.num_heads = heads;
  return a;
}

}  // namespace

TEST_CASE("SoftmaxAttention layout: packed qkv [B,N,3C]") {
  const Shape qkv{2, 5, 24};
  const Shape* src[] = {&qkv};
  SoftmaxAttentionLayout l;
  REQUIRE(decode_softmax_attention_layout(attention(AttentionInputs::kQkvPacked, 2), src, 1, &l).ok());
  CHECK(softmax_attention_layout_inputs(AttentionInputs::kQkvPacked) == 1);
  CHECK(l.q_src == 0);
  CHECK(l.k_src == 0);
  CHECK(l.v_src == 0);
  CHECK(l.q_off == 0);
  CHECK(l.k_off == 8);
  CHECK(l.v_off == 16);
  CHECK(l.q_stride == 24);
  CHECK(l.k_stride == 24);
  CHECK(l.v_stride == 24);
  CHECK(l.q_batch == 5 * 24);
  CHECK(l.v_batch == 5 * 24);
  CHECK(l.batch == 2);
  CHECK(l.nq == 5);
  CHECK(l.nk == 5);
  CHECK(l.c == 8);
  CHECK(l.heads == 2);
  CHECK(l.head_dim == 4);
  const Shape odd{2, 5, 25};
  const Shape* bad[] = {&odd};
  Status s = decode_softmax_attention_layout(attention(AttentionInputs::kQkvPacked, 2), bad, 1, &l);
  CHECK(s.code() == StatusCode::kBadModel);
  CHECK_MESSAGE(s.message().find("not 3C") != std::string::npos, s.message());
}

TEST_CASE("SoftmaxAttention layout: q [B,Nq,C] with packed kv [B,Nk,2C]") {
  const Shape q{3, 7, 12}, kv{3, 4, 24};
  const Shape* src[] = {&q, &kv};
  SoftmaxAttentionLayout l;
  REQUIRE(decode_softmax_attention_layout(attention(AttentionInputs::kQKvPacked, 3), src, 2, &l).ok());
  CHECK(softmax_attention_layout_inputs(AttentionInputs::kQKvPacked) == 2);
  CHECK(l.q_src == 0);
  CHECK(l.k_src == 1);
  CHECK(l.v_src == 1);
  CHECK(l.k_off == 0);
  CHECK(l.v_off == 12);
  CHECK(l.q_stride == 12);
  CHECK(l.k_stride == 24);
  CHECK(l.q_batch == 7 * 12);
  CHECK(l.k_batch == 4 * 24);
  CHECK(l.nq == 7);
  CHECK(l.nk == 4);
  CHECK(l.head_dim == 4);
  const Shape narrow{3, 4, 12};
  const Shape* bad[] = {&q, &narrow};
  CHECK_FALSE(decode_softmax_attention_layout(attention(AttentionInputs::kQKvPacked, 3), bad, 2, &l).ok());
  const Shape other_batch{2, 4, 24};
  const Shape* bad_batch[] = {&q, &other_batch};
  CHECK_FALSE(
      decode_softmax_attention_layout(attention(AttentionInputs::kQKvPacked, 3), bad_batch, 2, &l).ok());
}

TEST_CASE("SoftmaxAttention layout: separate q, k, v") {
  const Shape q{1, 6, 8}, k{1, 3, 8}, v{1, 3, 8};
  const Shape* src[] = {&q, &k, &v};
  SoftmaxAttentionLayout l;
  REQUIRE(decode_softmax_attention_layout(attention(AttentionInputs::kSeparate, 1), src, 3, &l).ok());
  CHECK(softmax_attention_layout_inputs(AttentionInputs::kSeparate) == 3);
  CHECK(l.q_src == 0);
  CHECK(l.k_src == 1);
  CHECK(l.v_src == 2);
  CHECK(l.k_off == 0);
  CHECK(l.v_off == 0);
  CHECK(l.v_stride == 8);
  CHECK(l.k_batch == 3 * 8);
  CHECK(l.nk == 3);
  CHECK(l.head_dim == 8);
  const Shape short_v{1, 2, 8};
  const Shape* bad[] = {&q, &k, &short_v};
  CHECK_FALSE(decode_softmax_attention_layout(attention(AttentionInputs::kSeparate, 1), bad, 3, &l).ok());
  const Shape* missing[] = {&q, &k, nullptr};
  CHECK_FALSE(decode_softmax_attention_layout(attention(AttentionInputs::kSeparate, 1), missing, 3, &l).ok());
  CHECK_FALSE(decode_softmax_attention_layout(attention(AttentionInputs::kSeparate, 1), src, 2, &l).ok());
  // 8 channels do not split into 3 heads.
  Status s = decode_softmax_attention_layout(attention(AttentionInputs::kSeparate, 3), src, 3, &l);
  CHECK_MESSAGE(s.message().find("do not split into 3 heads") != std::string::npos, s.message());
  CHECK_FALSE(decode_softmax_attention_layout(attention(AttentionInputs::kSeparate, 0), src, 3, &l).ok());
  CHECK_FALSE(
      decode_softmax_attention_layout(attention(static_cast<AttentionInputs>(7), 1), src, 3, &l).ok());
  CHECK(softmax_attention_layout_inputs(static_cast<AttentionInputs>(7)) == 0);
}

TEST_CASE("LinearAttention geometry: sizes from the attributes and the six input shapes") {
  LinearAttentionAttrs a;
  a.num_heads = 2;
  a.height = 7;
  a.width = 5;
  a.landmark_ratio = 2;
  const Shape q{2, 35, 16}, lw{8, 8, 2, 2}, ln{8}, vc{2, 1, 3, 3};
  const Shape* src[] = {&q, &q, &lw, &ln, &ln, &vc};
  LinearAttentionGeometry g;
  REQUIRE(decode_linear_attention_geometry(a, src, 6, &g).ok());
  CHECK(g.batch == 2);
  CHECK(g.n == 35);
  CHECK(g.c == 16);
  CHECK(g.heads == 2);
  CHECK(g.d == 8);
  CHECK(g.height == 7);
  CHECK(g.width == 5);
  CHECK(g.r == 2);
  CHECK(g.m_h == 3);  // ⌊7/2⌋
  CHECK(g.m_w == 2);  // ⌊5/2⌋
  CHECK(g.m == 6);
  CHECK(g.k == 3);

  const Shape even{2, 1, 4, 4};
  const Shape* even_conv[] = {&q, &q, &lw, &ln, &ln, &even};
  CHECK_FALSE(decode_linear_attention_geometry(a, even_conv, 6, &g).ok());
  const Shape wrong_lw{8, 8, 3, 3};
  const Shape* bad_lw[] = {&q, &q, &wrong_lw, &ln, &ln, &vc};
  CHECK_FALSE(decode_linear_attention_geometry(a, bad_lw, 6, &g).ok());
  const Shape* missing[] = {&q, &q, &lw, nullptr, &ln, &vc};
  CHECK_FALSE(decode_linear_attention_geometry(a, missing, 6, &g).ok());
  CHECK_FALSE(decode_linear_attention_geometry(a, src, 5, &g).ok());
  a.height = 5;  // 5 x 5 does not hold 35 tokens
  Status s = decode_linear_attention_geometry(a, src, 6, &g);
  CHECK_MESSAGE(s.message().find("does not hold 35 tokens") != std::string::npos, s.message());
  a.height = 7;
  a.landmark_ratio = 6;  // no landmark along the width of 5
  CHECK_FALSE(decode_linear_attention_geometry(a, src, 6, &g).ok());
}

TEST_CASE("LinearAttention attributes a kernel can run") {
  LinearAttentionAttrs a;
  CHECK(check_linear_attention_attrs(a).ok());
  a.pinv = PseudoInverse::kNewtonLegacy;
  CHECK(check_linear_attention_attrs(a).ok());
  a.pinv = static_cast<PseudoInverse>(9);
  CHECK(check_linear_attention_attrs(a).code() == StatusCode::kUnsupported);
  a.pinv = PseudoInverse::kNewtonScaled;
  a.kernel = static_cast<AttentionKernel>(3);
  CHECK(check_linear_attention_attrs(a).code() == StatusCode::kUnsupported);
  a.kernel = AttentionKernel::kGaussian;
  a.newton_iterations = -1;
  CHECK(check_linear_attention_attrs(a).code() == StatusCode::kBadModel);
  a.newton_iterations = 20;
  a.landmark_ln_eps = -1.0f;
  CHECK(check_linear_attention_attrs(a).code() == StatusCode::kBadModel);
}
