// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// KernelizedAttention on the x86 backend (backends/cpu/x86/kernelized_attention.cpp) against the reference
// kernel on random odd shapes: every kind, dk ≠ dv, d = 7, 1 head, N not a multiple of the 64-token block,
// dv past one GEMM panel, every ISA, 1 to 3 threads (fewer items than threads included), a smaller batch than
// planned. x86 runs the products on the packed GEMM (FMA), the key sum and normaliser in vector order and the
// elu's expm1 on vectors, so they agree to rounding; each x86 element is computed by one task, so its results
// are the same bits at every thread count.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct Case {
  KernelizedKind kind;
  int64_t batch, n, heads, dk, dv;
  float input_scale = 1.0f;
};

KernelizedAttentionAttrs attrs_of(KernelizedKind kind, int64_t heads, int64_t n) {
  KernelizedAttentionAttrs a;
  a.kind = kind;
  a.num_heads = static_cast<int32_t>(heads);
  a.eps = kind == KernelizedKind::kEluNormalized ? 1e-6f : 0.0f;
  a.scale = kind == KernelizedKind::kEluScaled ? std::pow(static_cast<float>(n), 0.25f) : 1.0f;
  return a;
}

// Returns whether some element of x86's result differs in bits from the reference's (so that the x86 kernel,
// not the reference fallback, ran).
bool check_case(const Case& k, std::mt19937& rng) {
  const KernelizedAttentionAttrs a = attrs_of(k.kind, k.heads, k.n);
  const HostTensor q = random_tensor(Shape{k.batch, k.n, k.heads * k.dk}, rng, k.input_scale);
  const HostTensor kk = random_tensor(Shape{k.batch, k.n, k.heads * k.dk}, rng, k.input_scale);
  const HostTensor v = random_tensor(Shape{k.batch, k.n, k.heads * k.dv}, rng);
  const std::vector<const HostTensor*> in{&q, &kk, &v};
  const std::vector<bool> constant{false, false, false};
  auto ref = create_reference_backend();
  OpRunner rr;
  Status st = rr.plan(*ref, OpType::kKernelizedAttention, a, in, constant);
  REQUIRE_MESSAGE(st.ok(), st.message());
  HostTensor want;
  REQUIRE(rr.run(in, &want).ok());
  float scale = 0.0f;
  for (float x : want.data) scale = std::fmax(scale, std::fabs(x));
  const HostTensor q1 = first_item(q), k1 = first_item(kk), v1 = first_item(v);
  const std::vector<const HostTensor*> in1{&q1, &k1, &v1};
  bool differs = false;
  for (X86Isa isa : isa_levels()) {
    auto x86 = make_x86(isa);
    REQUIRE(x86 != nullptr);
    HostTensor first;
    for (int threads : {1, 2, 3}) {
      CAPTURE(static_cast<int>(isa));
      CAPTURE(threads);
      ThreadedOpRunner r;
      st = r.plan(*x86, OpType::kKernelizedAttention, a, in, constant, threads);
      REQUIRE_MESSAGE(st.ok(), st.message());
      HostTensor got, got1;
      REQUIRE(r.run(in, &got).ok());
      REQUIRE(r.run(in1, &got1).ok());
      REQUIRE(got.data.size() == want.data.size());
      for (size_t i = 0; i < got.data.size(); ++i) {
        CHECK_MESSAGE(std::fabs(got.data[i] - want.data[i]) <= 1e-5f * scale, "element ", i, ": ",
                      got.data[i], " vs ", want.data[i], " (scale ", scale, ")");
        differs = differs || got.data[i] != want.data[i];
      }
      if (threads == 1) first = got;
      for (size_t i = 0; i < got.data.size(); ++i) CHECK(got.data[i] == first.data[i]);
      REQUIRE(got1.data.size() * static_cast<size_t>(k.batch) == got.data.size());
      for (size_t i = 0; i < got1.data.size(); ++i) CHECK(got1.data[i] == got.data[i]);
    }
  }
  return differs;
}

}  // namespace

TEST_CASE("x86 KernelizedAttention matches the reference on odd shapes (every kind, ISA, 1-3 threads)") {
  std::mt19937 rng(4924);
  const Case cases[] = {
      {KernelizedKind::kEluNormalized, 2, 13, 1, 7, 7},
      {KernelizedKind::kEluNormalized, 1, 37, 2, 5, 11},
      {KernelizedKind::kEluNormalized, 3, 50, 3, 16, 16},  // dv + 1 = 17: the key sum needs one more vector
      {KernelizedKind::kEluNormalized, 1, 101, 1, 9, 15},  // dv + 1 = 16 fills AVX2's two vectors exactly
      {KernelizedKind::kEluScaled, 2, 13, 1, 7, 7},
      {KernelizedKind::kEluScaled, 2, 64, 2, 32, 32},
      {KernelizedKind::kEluScaled, 1, 19, 3, 6, 17},
      {KernelizedKind::kSoftmaxPair, 2, 13, 1, 7, 7},
      {KernelizedKind::kSoftmaxPair, 2, 49, 2, 8, 24, 2.0f},
      {KernelizedKind::kSoftmaxPair, 1, 131, 1, 3, 16},  // one item, 131 tokens: split over the threads
      {KernelizedKind::kSoftmaxPair, 3, 11, 3, 33, 33, 20.0f},
      {KernelizedKind::kEluNormalized, 1, 200, 3, 64,
       64},                                               // the ViT-Tiny head; 4 token blocks, the last short
      {KernelizedKind::kEluNormalized, 2, 65, 1, 7, 70},  // dv past one 64-column panel
      {KernelizedKind::kEluScaled, 1, 129, 1, 13, 100, 3.0f},
      {KernelizedKind::kSoftmaxPair, 1, 70, 1, 7, 65},
  };
  bool differs = false;
  for (const Case& k : cases) {
    CAPTURE(static_cast<int>(k.kind));
    CAPTURE(k.n);
    CAPTURE(k.dk);
    CAPTURE(k.dv);
    differs = check_case(k, rng) || differs;
  }
  CHECK_MESSAGE(differs, "x86 gave the reference's bits everywhere: did its kernel run?");
}

}  // namespace test
}  // namespace vitrt
