// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LaViT's attention ops on the x86 backend (SoftmaxAttention with score bias and/or scores output,
// ReusedAttention, AttentionResidual) against the reference kernels: random and odd shapes (token and key
// counts off the vector width, head dims below and off it, 1 to 8 heads, batch 1 to 5), every output of the
// node (NaN-poisoned by OpRunner), every ISA level this CPU has, 1 and 2 threads, and batch 1 of a batched
// plan.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/x86/x86_backend.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct Case {
  std::string name;
  OpType type;
  OpAttrs attrs;
  std::vector<HostTensor> inputs;
  std::vector<bool> constant, batched;
  int outputs = 1;
};

std::vector<Case> cases() {
  std::mt19937 rng(2024);
  std::vector<Case> v;
  // SoftmaxAttention: layout 0 separate, 1 qkv, 2 q_kv.
  auto va = [&](int layout, int64_t b, int64_t nq, int64_t nk, int64_t h, int64_t d, bool bias, bool scores) {
    SoftmaxAttentionAttrs a;
    a.num_heads = static_cast<int32_t>(h);
    a.scale = 1.0f / std::sqrt(static_cast<float>(d));
    a.inputs = static_cast<AttentionInputs>(layout);
    const int64_t c = h * d;
    Case k{"va_l" + std::to_string(layout) + "_b" + std::to_string(b) + "_" + std::to_string(nq) + "x" +
               std::to_string(nk) + "_h" + std::to_string(h) + "_d" + std::to_string(d) +
               (bias ? "_bias" : "") + (scores ? "_scores" : ""),
           OpType::kSoftmaxAttention,
           a,
           {},
           {},
           {},
           scores ? 2 : 1};
    if (layout == 1) {
      k.inputs.push_back(random_tensor(Shape{b, nq, 3 * c}, rng));
    } else if (layout == 2) {
      k.inputs.push_back(random_tensor(Shape{b, nq, c}, rng));
      k.inputs.push_back(random_tensor(Shape{b, nk, 2 * c}, rng));
    } else {
      k.inputs.push_back(random_tensor(Shape{b, nq, c}, rng));
      k.inputs.push_back(random_tensor(Shape{b, nk, c}, rng));
      k.inputs.push_back(random_tensor(Shape{b, nk, c}, rng));
    }
    if (bias) k.inputs.push_back(random_tensor(Shape{b, h, nq, nk}, rng, 1.5f));
    k.constant.assign(k.inputs.size(), false);
    k.batched.assign(k.inputs.size(), true);
    v.push_back(std::move(k));
  };
  va(0, 3, 37, 19, 3, 20, true, true);
  va(0, 2, 5, 70, 2, 3, true, false);  // d below a vector, keys over 4 AVX-512 vectors
  va(1, 5, 33, 33, 1, 17, false, true);
  va(1, 1, 1, 1, 4, 8, true, true);
  va(2, 2, 100, 49, 2, 64, true, false);
  va(2, 2, 49, 49, 8, 64, true, true);     // LaViT stage 4
  va(2, 1, 3136, 49, 1, 64, false, true);  // LaViT stage 1, last VA layer
  va(2, 4, 31, 130, 5, 24, true, true);
  // ReusedAttention.
  auto la = [&](int64_t b, int64_t h, int64_t n, int64_t nk, int64_t d, bool scores,
                bool const_weights = true) {
    Case k{"la_b" + std::to_string(b) + "_h" + std::to_string(h) + "_" + std::to_string(n) + "x" +
               std::to_string(nk) + "_d" + std::to_string(d) + (scores ? "_scores" : "") +
               (const_weights ? "" : "_runtime_weights"),
           OpType::kReusedAttention,
           ReusedAttentionAttrs{static_cast<int32_t>(h)},
           {},
           {},
           {},
           scores ? 2 : 1};
    k.inputs = {random_tensor(Shape{b, h, n, nk}, rng, 2.0f),
                random_tensor(Shape{b, nk, h * d}, rng),
                random_tensor(Shape{nk, nk}, rng, 1.0f / std::sqrt(static_cast<float>(nk))),
                random_tensor(Shape{nk}, rng, 0.5f),
                random_tensor(Shape{n, n}, rng, 1.0f / std::sqrt(static_cast<float>(n))),
                random_tensor(Shape{n}, rng, 0.5f)};
    k.constant = {false, false, const_weights, const_weights, const_weights, const_weights};
    k.batched = {true, true, false, false, false, false};
    v.push_back(std::move(k));
  };
  la(2, 1, 24, 5, 8, true);
  la(3, 3, 35, 9, 9, true);
  la(4, 2, 13, 1, 4, true);
  la(1, 4, 100, 70, 64, true);      // several column panels
  la(5, 7, 37, 23, 17, false);      // 805 columns: a partial last panel
  la(2, 8, 49, 49, 64, true);       // LaViT stage 4
  la(1, 5, 196, 49, 64, true);      // LaViT stage 3
  la(2, 2, 784, 49, 64, false);     // LaViT stage 2
  la(2, 2, 20, 7, 8, true, false);  // weights not constants: the reference runs
  // AttentionResidual.
  auto ar = [&](int64_t b, int64_t h1, int64_t h2, int32_t hh, int32_t ww, int64_t nk, int64_t k) {
    Case c{"ar_b" + std::to_string(b) + "_h" + std::to_string(h1) + "to" + std::to_string(h2) + "_" +
               std::to_string(hh) + "x" + std::to_string(ww) + "_nk" + std::to_string(nk) + "_k" +
               std::to_string(k),
           OpType::kAttentionResidual,
           AttentionResidualAttrs{hh, ww},
           {},
           {},
           {},
           1};
    c.inputs = {random_tensor(Shape{b, h1, static_cast<int64_t>(hh) * ww, nk}, rng, 2.0f),
                random_tensor(Shape{h1, 1, k, k}, rng, 1.0f / static_cast<float>(k)),
                random_tensor(Shape{h1}, rng, 0.5f),
                random_tensor(Shape{h2, h1, 1, 1}, rng, 1.0f / std::sqrt(static_cast<float>(h1))),
                random_tensor(Shape{h2}, rng, 0.5f),
                random_tensor(Shape{h2}, rng, 0.5f)};
    c.constant = {false, true, true, true, true, true};
    c.batched = {true, false, false, false, false, false};
    v.push_back(std::move(c));
  };
  ar(2, 1, 2, 56, 56, 49, 2);  // LaViT stage 1 -> 2
  ar(1, 5, 8, 14, 14, 49, 2);  // stage 3 -> 4
  ar(3, 2, 5, 7, 5, 4, 2);     // keys below a vector, odd grid
  ar(2, 3, 3, 9, 6, 17, 3);
  ar(5, 8, 4, 4, 4, 100, 2);
  ar(1, 2, 3, 5, 5, 16, 1);
  return v;
}

double max_abs(const std::vector<float>& a) {
  double m = 0;
  for (float x : a) m = std::fmax(m, std::fabs(x));
  return m;
}

// Largest |a - b| (NaN when either is NaN, i.e. an unwritten poisoned element).
double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (std::isnan(e)) return NAN;
    m = std::fmax(m, e);
  }
  return m;
}

TEST_CASE(
    "x86 LaViT attention ops match the reference (odd shapes, every output, ISA, 1/2 threads, batch 1)") {
  auto ref = create_reference_backend();
  double worst_rel = 0;
  std::string worst_case;
  int checked = 0;
  for (const Case& c : cases()) {
    std::vector<const HostTensor*> ptrs;
    for (const auto& t : c.inputs) ptrs.push_back(&t);
    std::vector<HostTensor> small;
    std::vector<const HostTensor*> small_ptrs;
    const bool batched = c.inputs[0].shape[0] > 1;
    if (batched) {
      for (size_t i = 0; i < c.inputs.size(); ++i)
        small.push_back(c.batched[i] ? first_item(c.inputs[i]) : c.inputs[i]);
      for (const auto& t : small) small_ptrs.push_back(&t);
    }
    for (int o = 0; o < c.outputs; ++o) {
      ThreadedOpRunner rr;
      rr.select_outputs(c.outputs, o);
      REQUIRE(rr.plan(*ref, c.type, c.attrs, ptrs, c.constant, 1, c.name).ok());
      HostTensor want;
      REQUIRE(rr.run(ptrs, &want).ok());
      const double scale = std::fmax(1.0, max_abs(want.data));
      const double tol = 2e-5 * scale;
      for (X86Isa isa : isa_levels()) {
        auto be = make_x86(isa);
        REQUIRE(be);
        for (int threads : {1, 2}) {
          INFO("case ", c.name, " output ", o, " isa ", std::string(x86_isa_name(isa)), " threads ", threads);
          ThreadedOpRunner r;
          r.select_outputs(c.outputs, o);
          Status s = r.plan(*be, c.type, c.attrs, ptrs, c.constant, threads, c.name);
          REQUIRE_MESSAGE(s.ok(), s.message());
          HostTensor got;
          s = r.run(ptrs, &got);
          REQUIRE_MESSAGE(s.ok(), s.message());
          REQUIRE(got.shape == want.shape);
          const double e = max_diff(got.data, want.data);
          CHECK_MESSAGE(e <= tol, "max diff ", e, " tolerance ", tol);
          if (e / scale > worst_rel) worst_rel = e / scale, worst_case = c.name + ":out" + std::to_string(o);
          ++checked;
          if (batched) {
            HostTensor one;
            s = r.run(small_ptrs, &one);
            REQUIRE_MESSAGE(s.ok(), s.message());
            const std::vector<float> head(want.data.begin(), want.data.begin() + one.data.size());
            const double e1 = max_diff(one.data, head);
            CHECK_MESSAGE(e1 <= tol, "batch 1: max diff ", e1, " tolerance ", tol);
          }
        }
      }
    }
  }
  MESSAGE("checked ", checked, " runs; worst |x86 - ref| / max(1, max|ref|) = ", worst_rel, " (", worst_case,
          ")");
}

}  // namespace
}  // namespace test
}  // namespace vitrt
