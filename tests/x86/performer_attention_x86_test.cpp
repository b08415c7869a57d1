// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// PerformerAttention on the x86 backend (products on the packed GEMM, feature maps on vectors; items or token
// blocks over the threads) against the reference kernel on odd shapes: both kernels and key stabilisers, one
// head with d = 7, cross attention (Nk != Nq), m below and above d and a single feature, every ISA, 1 and 2
// threads, a smaller batch than planned, and items fewer than threads with more than one 64-token block. The
// x86 kernel sums in float (GEMM order) where the reference sums in double: the same values to rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct Case {
  int64_t batch, nq, nk, heads, d, m;
  PerformerKernel kernel = PerformerKernel::kSoftmax;
  PerformerKeyMax key_max = PerformerKeyMax::kPerHead;
};

void check_case(const Case& k, std::mt19937& rng) {
  const int64_t c = k.heads * k.d;
  PerformerAttentionAttrs attrs;
  attrs.heads = static_cast<int32_t>(k.heads);
  attrs.kernel = k.kernel;
  attrs.key_max = k.key_max;
  const HostTensor q = random_tensor(Shape{k.batch, k.nq, c}, rng, 1.0f, 0.1f);
  const HostTensor kk = random_tensor(Shape{k.batch, k.nk, c}, rng, 1.0f, -0.1f);
  const HostTensor v = random_tensor(Shape{k.batch, k.nk, c}, rng, 1.0f);
  const HostTensor w = random_tensor(Shape{k.m, k.d}, rng, 1.0f);
  const std::vector<const HostTensor*> in{&q, &kk, &v, &w};
  const std::vector<bool> constant{false, false, false, true};
  auto ref = create_reference_backend();
  OpRunner rr;
  REQUIRE(rr.plan(*ref, OpType::kPerformerAttention, attrs, in, constant).ok());
  HostTensor want;
  REQUIRE(rr.run(in, &want).ok());
  const HostTensor q1 = first_item(q), k1 = first_item(kk), v1 = first_item(v);
  const std::vector<const HostTensor*> in1{&q1, &k1, &v1, &w};
  const bool per_item = k.key_max == PerformerKeyMax::kPerHead || k.kernel == PerformerKernel::kGeneralized;
  for (X86Isa isa : isa_levels()) {
    auto x86 = make_x86(isa);
    REQUIRE(x86 != nullptr);
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      ThreadedOpRunner r;
      Status st = r.plan(*x86, OpType::kPerformerAttention, attrs, in, constant, threads);
      REQUIRE_MESSAGE(st.ok(), st.message());
      HostTensor got, got1;
      REQUIRE(r.run(in, &got).ok());
      REQUIRE(got.data.size() == want.data.size());
      float worst = 0.0f;
      for (size_t i = 0; i < got.data.size(); ++i) {
        const float err = std::fabs(got.data[i] - want.data[i]) / (1.0f + std::fabs(want.data[i]));
        worst = std::fmax(worst, err);
        CHECK_MESSAGE(err <= 2e-5f, "element ", i, ": ", got.data[i], " vs ", want.data[i]);
      }
      MESSAGE("worst relative error ", worst);
      // An image's output depends on the rest of the batch only through the global key max.
      if (per_item && k.batch > 1) {
        REQUIRE(r.run(in1, &got1).ok());
        for (size_t i = 0; i < got1.data.size(); ++i) CHECK(got1.data[i] == got.data[i]);
      }
    }
  }
}

}  // namespace

TEST_CASE(
    "x86 PerformerAttention matches the reference on odd shapes (both kernels, ISAs, 1 and 2 threads)") {
  std::mt19937 rng(5021);
  const Case cases[] = {
      {2, 13, 13, 1, 7, 13},                                                       // one head, d = 7
      {2, 19, 19, 3, 8, 16, PerformerKernel::kSoftmax, PerformerKeyMax::kGlobal},  // couples the batch
      {2, 5, 23, 2, 9, 6},                                                         // cross, m < d
      {3, 17, 17, 2, 7, 20, PerformerKernel::kGeneralized},
      {2, 9, 9, 2, 5, 1},        // a single random feature
      {1, 150, 133, 1, 16, 44},  // one item at 2 threads: key, context and query blocks split
      {1, 70, 70, 1, 64, 266},   // DeiT-like head: m = int(64·ln 64)
      {1, 130, 130, 1, 12, 29, PerformerKernel::kSoftmax, PerformerKeyMax::kGlobal},
  };
  for (const Case& k : cases) {
    CAPTURE(k.batch);
    CAPTURE(k.nq);
    CAPTURE(k.nk);
    CAPTURE(k.heads);
    CAPTURE(k.d);
    CAPTURE(k.m);
    check_case(k, rng);
  }
}

}  // namespace test
}  // namespace vitrt
