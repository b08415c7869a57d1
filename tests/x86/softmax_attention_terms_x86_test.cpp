// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SoftmaxAttention's Swin terms (ir/op_attrs.h): the scale on q, a bias [1,h,Nq,Nk] broadcast over the batch
// (or a full [B,h,Nq,Nk] one) and a window mask [nW,Nq,Nk] added per batch item b mod nW; and Swin V2's
// cosine form (q and k rows L2-normalised, clamped at eps, a scale per head), with a zero key and a tiny
// query row that the eps clamps. On odd shapes (1 and 3 heads of 7, 13 or 49 queries: one and two query
// blocks, 9 keys for separate q/k/v, batch 6 over 3 windows) the reference kernel against the formula in
// double, and the x86 kernel (every ISA, 1 and 2 threads) against the reference; outputs poisoned before each
// run. Then the shapes the op refuses, named.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct Case {
  AttentionInputs layout;
  int64_t heads, nq, nk;
  bool scale_on_q;
  int bias;  // 0 none, 1 broadcast [1,h,Nq,Nk], 2 full [B,h,Nq,Nk]
  bool mask;
  bool cosine = false;  // qk_norm with head_scales (the scale then 1, not on q)
};

constexpr float kCosineEps = 0.05f;  // clamps the tiny rows the test plants, not the others

// x / max(‖x‖₂, eps) over d values, in double.
std::vector<double> normalized(const float* x, int64_t d, bool on) {
  std::vector<double> out(x, x + d);
  if (!on) return out;
  double n = 0;
  for (double v : out) n += v * v;
  n = std::max(std::sqrt(n), double(kCosineEps));
  for (double& v : out) v /= n;
  return out;
}

constexpr int64_t kBatch = 6, kWindows = 3, kD = 7;

// The formula in double: per (b, h, i) s_j = Σ_t q'_t·k_jt (q' = fl(q·scale) with the scale on q, else the
// sum times scale), + bias, + mask[b mod nW]; out = Σ_j softmax(s)_j · v_j.
std::vector<double> formula(const Case& c, const SoftmaxAttentionAttrs& a, const float* q, int64_t qs,
                            const float* k, const float* v, int64_t kvs, const HostTensor* bias,
                            const HostTensor* mask) {
  const int64_t ch = c.heads * kD;
  std::vector<double> out(static_cast<size_t>(kBatch * c.nq * ch)), s(static_cast<size_t>(c.nk));
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t i = 0; i < c.nq; ++i) {
        const float scale = c.cosine ? a.head_scales[static_cast<size_t>(h)] : a.scale;
        const std::vector<double> qi = normalized(q + (b * c.nq + i) * qs + h * kD, kD, c.cosine);
        double mx = -INFINITY;
        for (int64_t j = 0; j < c.nk; ++j) {
          const std::vector<double> kj = normalized(k + (b * c.nk + j) * kvs + h * kD, kD, c.cosine);
          double acc = 0;
          for (int64_t t = 0; t < kD; ++t)
            acc += (c.scale_on_q ? double(float(qi[t]) * scale) : qi[t]) * kj[t];
          if (!c.scale_on_q) acc *= scale;
          if (bias)
            acc += bias->data[static_cast<size_t>((((c.bias == 2 ? b : 0) * c.heads + h) * c.nq + i) * c.nk +
                                                  j)];
          if (mask) acc += mask->data[static_cast<size_t>(((b % kWindows) * c.nq + i) * c.nk + j)];
          s[j] = acc;
          mx = std::max(mx, acc);
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (int64_t t = 0; t < kD; ++t) {
          double o = 0;
          for (int64_t j = 0; j < c.nk; ++j) o += s[j] / sum * v[(b * c.nk + j) * kvs + h * kD + t];
          out[static_cast<size_t>((b * c.nq + i) * ch + h * kD + t)] = o;
        }
      }
  return out;
}

}  // namespace

TEST_CASE(
    "SoftmaxAttention with the scale on q, a broadcast bias and a window mask: ref vs formula, x86 vs ref") {
  auto ref = create_reference_backend();
  std::mt19937 rng(2828);
  std::vector<Case> cases;
  for (int64_t heads : {1, 3})
    for (bool scale_on_q : {false, true})
      for (int bias : {0, 1, 2})
        for (bool mask : {false, true}) {
          if (mask && bias == 0) continue;  // a mask comes after a bias
          cases.push_back({AttentionInputs::kQkvPacked, heads, heads == 1 ? 49 : 13, heads == 1 ? 49 : 13,
                           scale_on_q, bias, mask});
        }
  cases.push_back({AttentionInputs::kSeparate, 3, 13, 9, true, 1, true});
  cases.push_back({AttentionInputs::kSeparate, 1, 49, 9, false, 2, false});
  for (int64_t heads : {1, 3})
    for (int bias : {0, 1})
      for (bool mask : {false, true}) {
        if (mask && bias == 0) continue;
        cases.push_back({AttentionInputs::kQkvPacked, heads, heads == 1 ? 49 : 13, heads == 1 ? 49 : 13,
                         false, bias, mask, true});
      }
  cases.push_back({AttentionInputs::kSeparate, 3, 13, 9, false, 2, false, true});
  int checked = 0;
  for (const Case& c : cases) {
    INFO("layout ", static_cast<int>(c.layout), " heads ", c.heads, " nq ", c.nq, " nk ", c.nk,
         " scale_on_q ", c.scale_on_q, " bias ", c.bias, " mask ", c.mask, " cosine ", c.cosine);
    const int64_t ch = c.heads * kD;
    SoftmaxAttentionAttrs a;
    a.num_heads = static_cast<int32_t>(c.heads);
    a.scale = 0.37796447f;  // 1/√7, no power of two
    a.inputs = c.layout;
    a.scale_on_q = c.scale_on_q;
    if (c.cosine) {  // Swin V2: exp(clamp(logit_scale, max=log 100)) per head
      a.scale = 1.0f;
      a.qk_norm = true;
      a.qk_norm_eps = kCosineEps;
      const float per_head[] = {12.5f, 3.5f, 17.25f};
      a.head_scales.assign(per_head, per_head + c.heads);
    }
    std::vector<HostTensor> t;
    t.reserve(5);
    if (c.layout == AttentionInputs::kQkvPacked) {
      t.push_back(random_tensor(Shape{kBatch, c.nq, 3 * ch}, rng, 1.5f));
    } else {
      t.push_back(random_tensor(Shape{kBatch, c.nq, ch}, rng, 1.5f));
      t.push_back(random_tensor(Shape{kBatch, c.nk, ch}, rng, 1.5f));
      t.push_back(random_tensor(Shape{kBatch, c.nk, ch}, rng));
    }
    const size_t nb = t.size();
    if (c.bias) t.push_back(random_tensor(Shape{c.bias == 2 ? kBatch : 1, c.heads, c.nq, c.nk}, rng, 2.0f));
    if (c.mask) {
      t.push_back(random_tensor(Shape{kWindows, c.nq, c.nk}, rng));
      for (size_t i = 0; i < t.back().data.size(); i += 3) t.back().data[i] = -100.0f;  // Swin's mask value
    }
    std::vector<const HostTensor*> in;
    for (const HostTensor& x : t) in.push_back(&x);
    const float* q = t[0].data.data();
    const float* k = c.layout == AttentionInputs::kQkvPacked ? q + ch : t[1].data.data();
    const float* v = c.layout == AttentionInputs::kQkvPacked ? q + 2 * ch : t[2].data.data();
    const int64_t stride = c.layout == AttentionInputs::kQkvPacked ? 3 * ch : ch;
    if (c.cosine) {  // a key of zeros (0 / eps) and a query row of 1e-3 (its norm clamped) in every head
      float* q0 = t[0].data.data();
      float* k0 = c.layout == AttentionInputs::kQkvPacked ? q0 + ch : t[1].data.data();
      for (int64_t x = 0; x < ch; ++x) {
        k0[(2 * c.nk + 3) * stride + x] = 0.0f;
        q0[(4 * c.nq + 1) * stride + x] = x % 2 ? 1e-3f : -1e-3f;
      }
    }
    const std::vector<double> want =
        formula(c, a, q, stride, k, v, stride, c.bias ? &t[nb] : nullptr, c.mask ? &t[nb + 1] : nullptr);
    double vmax = 0;
    for (int64_t i = 0; i < kBatch * c.nk; ++i)
      for (int64_t x = 0; x < ch; ++x) vmax = std::max(vmax, std::fabs(double(v[i * stride + x])));
    // float32 scores carry ~|s|·d·2^-24 of error (|s| up to ~100 with the mask, whose rows' softmax it
    // does not reach), the probabilities that relative error, the output a convex mix of v: 1e-5·max|v|.
    const double tol = 1e-5 * vmax;
    ThreadedOpRunner rr;
    Status st = rr.plan(*ref, OpType::kSoftmaxAttention, a, in, std::vector<bool>(in.size(), false), 1);
    REQUIRE_MESSAGE(st.ok(), st.message());
    HostTensor r;
    REQUIRE(rr.run(in, &r).ok());  // poisoned with NaN first
    REQUIRE(r.data.size() == want.size());
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(r.data[i] - want[i]));
    CHECK_MESSAGE(worst <= tol, "ref vs formula ", worst, " > ", tol);
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        ThreadedOpRunner xr;
        st = xr.plan(*x86, OpType::kSoftmaxAttention, a, in, std::vector<bool>(in.size(), false), threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        HostTensor got;
        REQUIRE(xr.run(in, &got).ok());
        double w = 0;
        for (size_t i = 0; i < got.data.size(); ++i)
          w = std::isnan(got.data[i]) ? INFINITY : std::max(w, std::fabs(double(got.data[i]) - r.data[i]));
        CHECK_MESSAGE(w <= 2 * tol, "x86 vs ref ", w, " > ", 2 * tol);
        ++checked;
      }
    }
  }
  MESSAGE("checked ", checked, " x86 runs of SoftmaxAttention with Swin's terms");
}

TEST_CASE(
    "SoftmaxAttention refuses wrong bias and mask shapes and the scale on q below version 2, naming them") {
  SoftmaxAttentionAttrs a;
  a.num_heads = 3;
  a.inputs = AttentionInputs::kQkvPacked;
  const Shape qkv{6, 13, 63};
  struct Bad {
    Shape bias, mask;  // rank 0: absent
    bool scale_on_q;
    int version;
    const char* why;
  };
  const Bad bad[] = {
      {Shape{1, 1, 13, 13}, {}, false, 1, "score bias must be [6,3,13,13] or [1,3,13,13], got [1,1,13,13]"},
      {Shape{3, 13, 13}, {}, false, 1, "score bias must be"},
      {Shape{2, 3, 13, 13}, {}, false, 1, "score bias must be"},
      {Shape{1, 3, 13, 13}, Shape{3, 1, 13, 13}, false, 1, "score mask must be [nW,13,13], got [3,1,13,13]"},
      {Shape{1, 3, 13, 13}, Shape{3, 13, 12}, false, 1, "score mask must be"},
      {Shape{1, 3, 13, 13}, Shape{4, 13, 13}, false, 1,
       "batch 6 is not a multiple of the score mask's 4 windows"},
      {Shape{1, 3, 13, 13}, {}, true, 1, "scale_on_q needs op version 2"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.why);
    Node n;
    n.type = OpType::kSoftmaxAttention;
    a.scale_on_q = b.scale_on_q;
    n.attrs = a;
    n.version = b.version;
    n.outputs = {0};
    const Shape* src[3] = {&qkv, b.bias.rank ? &b.bias : nullptr, b.mask.rank ? &b.mask : nullptr};
    const int num = 1 + (b.bias.rank > 0) + (b.mask.rank > 0);
    n.inputs.assign(static_cast<size_t>(num), 0);
    Shape dst[2];
    const Status st = infer_node_shapes(n, src, num, dst);
    REQUIRE_FALSE(st.ok());
    CHECK_MESSAGE(st.message().find("SoftmaxAttention") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find(b.why) != std::string::npos, st.message());
  }
  // What it takes: the same with version 2, a broadcast or full bias, a mask of 1, 2, 3 or 6 windows.
  Node n;
  n.type = OpType::kSoftmaxAttention;
  a.scale_on_q = true;
  n.attrs = a;
  n.version = 2;
  n.outputs = {0};
  for (const Shape& bias : {Shape{1, 3, 13, 13}, Shape{6, 3, 13, 13}})
    for (int64_t w : {1, 2, 3, 6}) {
      const Shape mask{w, 13, 13};
      const Shape* src[3] = {&qkv, &bias, &mask};
      n.inputs.assign(3, 0);
      Shape dst[2];
      const Status st = infer_node_shapes(n, src, 3, dst);
      CHECK_MESSAGE(st.ok(), st.message());
      CHECK(dst[0] == Shape{6, 13, 21});
    }
}

TEST_CASE("SoftmaxAttention refuses cosine attributes it cannot run, naming them") {
  const Shape qkv{6, 13, 63};
  struct Bad {
    bool qk_norm;
    float eps;
    std::vector<float> head_scales;
    float scale;
    bool scale_on_q;
    int version;
    const char* why;
  };
  const float inf = INFINITY;
  const Bad bad[] = {
      {true,
       1e-12f,
       {},
       1.0f,
       false,
       2,
       "qk_norm and head_scales need op version 3 (this node is version 2)"},
      {false, 1e-12f, {1, 2, 3}, 1.0f, false, 1, "need op version 3"},
      {true, -1.0f, {}, 1.0f, false, 3, "qk_norm_eps must be finite and >= 0"},
      {true, NAN, {}, 1.0f, false, 3, "qk_norm_eps must be finite"},
      {true, 1e-12f, {1, 2}, 1.0f, false, 3, "head_scales must hold num_heads (3) values, got 2"},
      {true, 1e-12f, {1, 2, 3, 4}, 1.0f, false, 3, "head_scales must hold num_heads (3) values, got 4"},
      {true, 1e-12f, {1, 2, 3}, 0.5f, false, 3, "head_scales replace the scale"},
      {true, 1e-12f, {1, 2, 3}, 1.0f, true, 3, "head_scales replace the scale"},
      {true, 1e-12f, {1, inf, 3}, 1.0f, false, 3, "head_scales must be finite"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.why);
    SoftmaxAttentionAttrs a;
    a.num_heads = 3;
    a.inputs = AttentionInputs::kQkvPacked;
    a.qk_norm = b.qk_norm;
    a.qk_norm_eps = b.eps;
    a.head_scales = b.head_scales;
    a.scale = b.scale;
    a.scale_on_q = b.scale_on_q;
    Node n;
    n.type = OpType::kSoftmaxAttention;
    n.attrs = a;
    n.version = b.version;
    n.inputs = {0};
    n.outputs = {0};
    const Shape* src[1] = {&qkv};
    Shape dst[2];
    const Status st = infer_node_shapes(n, src, 1, dst);
    REQUIRE_FALSE(st.ok());
    CHECK_MESSAGE(st.message().find(b.why) != std::string::npos, st.message());
  }
  // The version a writer gives: 3 exactly with qk_norm or head_scales.
  SoftmaxAttentionAttrs a;
  CHECK(lowest_op_version(OpType::kSoftmaxAttention, a) == 1);
  a.qk_norm = true;
  CHECK(lowest_op_version(OpType::kSoftmaxAttention, a) == 3);
  a.qk_norm = false;
  a.head_scales = {1.0f};
  CHECK(lowest_op_version(OpType::kSoftmaxAttention, a) == 3);
}

}  // namespace test
}  // namespace vitrt
