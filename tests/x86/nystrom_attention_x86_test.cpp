// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The x86 NystromAttention kernel (Nyströmformer) against the reference kernel (double) on random odd shapes:
// N not a multiple of m (the T2T segment rule) nor of the token block (64) nor of k3·V's chunk (512),
// d = 1..40, m = 1..N, 1..5 heads, batch 1..3, both initialisations, with and without the V conv, 0..8
// iterations; at every ISA level this CPU has and 1, 2 and 3 threads (fewer items than threads included),
// outputs and workspace poisoned with NaN by the runner, and a smaller batch than planned.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "backends/cpu/x86/x86_backend.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct Spec {
  const char* name;
  int64_t batch, n, heads, d, m, ks;
  NystromInit init;
  int32_t iterations;
};

const Spec kSpecs[] = {
    {"b2_n13_h1_d7_m4_ks3_global", 2, 13, 1, 7, 4, 3, NystromInit::kGlobal, 6},
    {"b3_n131_h2_d8_m10_perhead", 3, 131, 2, 8, 10, 0, NystromInit::kPerHead, 6},
    {"b1_n200_h5_d40_m33_ks5_global", 1, 200, 5, 40, 33, 5, NystromInit::kGlobal, 6},
    {"b2_n64_h3_d1_m64_ks1", 2, 64, 3, 1, 64, 1, NystromInit::kPerHead, 6},
    {"b1_n65_h1_d17_m1_global", 1, 65, 1, 17, 1, 0, NystromInit::kGlobal, 6},
    {"b2_n97_h2_d16_m17_ks9_iters8", 2, 97, 2, 16, 17, 9, NystromInit::kGlobal, 8},
    {"b1_n50_h4_d12_m7_iters0", 1, 50, 4, 12, 7, 3, NystromInit::kPerHead, 0},
    // three chunks of k3·V (512 tokens each, the last short) merged per item; 3 heads on 2 threads
    {"b1_n1100_h3_d7_m13_ks3_global", 1, 1100, 3, 7, 13, 3, NystromInit::kGlobal, 6},
};

NystromAttentionAttrs attrs_of(const Spec& s) {
  NystromAttentionAttrs a;
  a.num_heads = static_cast<int32_t>(s.heads);
  a.landmarks = static_cast<int32_t>(s.m);
  a.q_scale = std::pow(static_cast<float>(s.d), -0.25f);
  a.k_scale = a.q_scale;
  a.init = s.init;
  a.iterations = s.iterations;
  return a;
}

std::vector<HostTensor> inputs_of(const Spec& s, std::mt19937& rng) {
  const int64_t c = s.heads * s.d;
  std::vector<HostTensor> in;
  for (int i = 0; i < 3; ++i) in.push_back(random_tensor(Shape{s.batch, s.n, c}, rng));
  if (s.ks > 0) in.push_back(random_tensor(Shape{s.heads, 1, s.ks, 1}, rng, 0.5f));
  return in;
}

const std::vector<bool> kConstant = {false, false, false, true};

std::vector<float> run_on(Backend& be, const Spec& s, const std::vector<HostTensor>& in, int threads) {
  std::vector<const HostTensor*> ptrs;
  for (const auto& t : in) ptrs.push_back(&t);
  ThreadedOpRunner r;
  Status st = r.plan(be, OpType::kNystromAttention, attrs_of(s), ptrs, kConstant, threads, s.name);
  REQUIRE_MESSAGE(st.ok(), st.message());
  HostTensor out;
  st = r.run(ptrs, &out);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return out.data;
}

// max |a − b| (NaN if any element is NaN or the sizes differ).
double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return NAN;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (std::isnan(e)) return NAN;
    worst = std::fmax(worst, e);
  }
  return worst;
}

}  // namespace

TEST_CASE("x86 NystromAttention matches the reference kernel on odd shapes, every ISA and thread count") {
  std::mt19937 rng(20261126);
  auto ref = create_reference_backend();
  double worst_all = 0;
  for (const Spec& s : kSpecs) {
    const std::vector<HostTensor> in = inputs_of(s, rng);
    const std::vector<float> want = run_on(*ref, s, in, 1);
    double scale = 1.0;
    for (float x : want) scale = std::fmax(scale, std::fabs(x));
    // float32 products, softmax and the streamed k3·V against double: a few float ulps of the largest value,
    // grown by the iterations (6 steps of a polynomial in k2·Z).
    const double tol = 3e-6 * scale;
    // Batch item 0 alone: the per-(b,h) initialisation makes it the batched result's first item, the global
    // one needs its own reference run.
    std::vector<HostTensor> small;
    for (size_t i = 0; i < in.size(); ++i) small.push_back(kConstant[i] ? in[i] : first_item(in[i]));
    std::vector<float> want1;
    if (s.batch > 1) {
      if (s.init == NystromInit::kGlobal) {
        Spec s1 = s;
        s1.batch = 1;
        want1 = run_on(*ref, s1, small, 1);
      } else {
        want1.assign(want.begin(), want.begin() + static_cast<int64_t>(want.size()) / s.batch);
      }
    }
    for (X86Isa isa : isa_levels()) {
      auto be = make_x86(isa);
      REQUIRE(be);
      std::vector<float> first;
      for (int threads : {1, 2, 3}) {
        INFO("case ", s.name, " isa ", std::string(x86_isa_name(isa)), " threads ", threads);
        std::vector<const HostTensor*> ptrs, small_ptrs;
        for (const auto& t : in) ptrs.push_back(&t);
        for (const auto& t : small) small_ptrs.push_back(&t);
        ThreadedOpRunner r;
        Status st = r.plan(*be, OpType::kNystromAttention, attrs_of(s), ptrs, kConstant, threads, s.name);
        REQUIRE_MESSAGE(st.ok(), st.message());
        HostTensor out;
        st = r.run(ptrs, &out);
        REQUIRE_MESSAGE(st.ok(), st.message());
        const double e = max_diff(out.data, want);
        CHECK_MESSAGE(e <= tol, s.name, ": max diff ", e, " vs tolerance ", tol);
        worst_all = std::fmax(worst_all, e / scale);
        // The sums are split by N (items, 512-token chunks, 64-token blocks), never by the threads, so the
        // thread count changes no bit.
        if (threads == 1)
          first = out.data;
        else
          CHECK(out.data == first);
        if (s.batch > 1) {
          HostTensor o1;
          st = r.run(small_ptrs, &o1);
          REQUIRE_MESSAGE(st.ok(), st.message());
          const double e1 = max_diff(o1.data, want1);
          CHECK_MESSAGE(e1 <= tol, s.name, " (batch 1 of a batch-", s.batch, " plan): max diff ", e1);
        }
      }
    }
  }
  MESSAGE("largest difference from the reference, relative to the output scale: ", worst_all);
}

}  // namespace test
}  // namespace vitrt
