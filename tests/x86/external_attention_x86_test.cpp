// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ExternalAttention on the x86 backend (logits and products on the packed GEMM, the softmax over the tokens
// in three threaded passes over (batch, head, token block)) against the reference kernel on odd shapes: one
// head of width 7, N not a multiple of the 64-token block (one, two and five blocks), S below, at and above a
// vector, no biases, eps 0, every ISA, 1 and 2 threads, a smaller batch than planned; outputs and workspace
// are poisoned with NaN by the runner. The x86 kernel multiplies and adds with FMA, takes xsimd's exp and
// sums each slot's exponentials per block in float where the reference uses std::exp and one double sum: the
// same values to a few float roundings of each term.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct Case {
  int64_t batch, tokens, heads, head_dim, slots;
  bool bias = true;
  float eps = 1e-9f;
};

double worst_seen = 0.0;

// x86 against the reference on `k` at its planned batch and, when larger than 1, at batch 1.
void check_case(const Case& k, std::mt19937& rng) {
  const int64_t c = k.heads * k.head_dim;
  const HostTensor x = random_tensor(Shape{k.batch, k.tokens, c}, rng, 2.0f);
  const HostTensor w0 = random_tensor(Shape{k.slots, k.head_dim}, rng, 1.0f / std::sqrt(float(k.head_dim)));
  const HostTensor w1 = random_tensor(Shape{k.head_dim, k.slots}, rng, 1.0f / std::sqrt(float(k.slots)));
  const HostTensor b0 = random_tensor(Shape{k.slots}, rng, 0.5f), b1 = random_tensor(Shape{k.head_dim}, rng);
  const std::vector<const HostTensor*> in{&x, &w0, k.bias ? &b0 : nullptr, &w1, k.bias ? &b1 : nullptr};
  const std::vector<bool> constant{false, true, true, true, true};
  ExternalAttentionAttrs attrs;
  attrs.num_heads = static_cast<int32_t>(k.heads);
  attrs.eps = k.eps;
  auto ref = create_reference_backend();
  OpRunner rr;
  REQUIRE(rr.plan(*ref, OpType::kExternalAttention, attrs, in, constant).ok());
  HostTensor want, want1;
  REQUIRE(rr.run(in, &want).ok());
  const HostTensor x1 = first_item(x);
  std::vector<const HostTensor*> in1 = in;
  in1[0] = &x1;
  REQUIRE(rr.run(in1, &want1).ok());
  for (X86Isa isa : isa_levels()) {
    auto x86 = make_x86(isa);
    REQUIRE(x86 != nullptr);
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      ThreadedOpRunner r;
      Status st = r.plan(*x86, OpType::kExternalAttention, attrs, in, constant, threads);
      REQUIRE_MESSAGE(st.ok(), st.message());
      HostTensor got, got1;
      REQUIRE(r.run(in, &got).ok());
      REQUIRE(r.run(in1, &got1).ok());
      REQUIRE(got.data.size() == want.data.size());
      REQUIRE(got1.data.size() == want1.data.size());
      for (size_t i = 0; i < got.data.size(); ++i) {
        const double err = std::fabs(got.data[i] - want.data[i]) / (1.0 + std::fabs(want.data[i]));
        worst_seen = err > worst_seen ? err : worst_seen;
        CHECK_MESSAGE(err <= 2e-6, "element ", i, ": ", got.data[i], " vs ", want.data[i]);
      }
      // Items are independent: the first image alone gives the same bits as within the batch.
      for (size_t i = 0; i < got1.data.size(); ++i) CHECK(got1.data[i] == got.data[i]);
    }
  }
}

}  // namespace

TEST_CASE("x86 ExternalAttention matches the reference on odd shapes (every ISA, 1 and 2 threads)") {
  std::mt19937 rng(5252);
  const Case cases[] = {
      {2, 13, 3, 7, 11},                 // EAMLP-like, everything odd, S under a vector
      {2, 29, 1, 7, 64},                 // one head of width 7, EAMLP's S
      {2, 37, 1, 12, 19, false, 0.0f},   // xmu's ExternalAttention: no biases, no eps
      {3, 131, 4, 9, 70},                // three token blocks, S just over a multiple of 16
      {1, 197, 12, 16, 64},              // DeiT-Tiny's EAMLP at 224: 12 heads of 16, four blocks
      {2, 1, 2, 5, 3},                   // one token: each slot's softmax is 1
      {2, 9, 5, 1, 1, true, 0.5f},       // one slot, width 1
      {2, 300, 2, 33, 17, true, 1e-3f},  // five blocks, the last short
      {1, 1000, 3, 7, 64},               // 16 blocks per item: the per-item maxima and sums over many blocks
  };
  for (const Case& k : cases) {
    CAPTURE(k.batch);
    CAPTURE(k.tokens);
    CAPTURE(k.heads);
    CAPTURE(k.head_dim);
    CAPTURE(k.slots);
    check_case(k, rng);
  }
  MESSAGE("worst |x86 - ref| / (1 + |ref|): ", worst_seen);
}

}  // namespace test
}  // namespace vitrt
