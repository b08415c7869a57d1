// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// FastformerAttention on the x86 backend (token blocks threaded over (item, block), vector scores, pooling
// and scaling) against the reference kernel on odd shapes: 1 head, d = 7, channels not a multiple of the
// vector width, token counts around the block size, every ISA, 1 and 2 threads, a smaller batch than planned.
// The x86 kernel sums in float blocks where the reference sums in double: the same values to float rounding,
// and the same bits at any thread count (the block partition fixes every sum's order).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct Case {
  int64_t batch, n, c, heads;
};

void check_case(const Case& k, std::mt19937& rng) {
  const Shape x{k.batch, k.n, k.c};
  const HostTensor q = random_tensor(x, rng, 1.0f, 0.2f), kk = random_tensor(x, rng, 1.0f, -0.1f);
  const float ws = 1.0f / std::sqrt(static_cast<float>(k.c));
  // Larger weights than a trained model's make the softmaxes peaked, so the maxima matter.
  const HostTensor wq = random_tensor(Shape{k.heads, k.c}, rng, 3.0f * ws),
                   bq = random_tensor(Shape{k.heads}, rng);
  const HostTensor wk = random_tensor(Shape{k.heads, k.c}, rng, 3.0f * ws),
                   bk = random_tensor(Shape{k.heads}, rng);
  const std::vector<const HostTensor*> in{&q, &kk, &wq, &bq, &wk, &bk};
  const std::vector<bool> constant{false, false, true, true, true, true};
  FastformerAttentionAttrs a;
  a.heads = static_cast<int32_t>(k.heads);
  a.scale = 1.0f / std::sqrt(static_cast<float>(k.c / k.heads));
  auto ref = create_reference_backend();
  OpRunner rr;
  Status st = rr.plan(*ref, OpType::kFastformerAttention, a, in, constant);
  REQUIRE_MESSAGE(st.ok(), st.message());
  HostTensor want;
  REQUIRE(rr.run(in, &want).ok());
  const HostTensor q1 = first_item(q), k1 = first_item(kk);
  std::vector<const HostTensor*> in1 = in;
  in1[0] = &q1;
  in1[1] = &k1;
  double scale = 0.0;
  for (float v : want.data) scale = std::fmax(scale, std::fabs(v));
  for (X86Isa isa : isa_levels()) {
    auto x86 = make_x86(isa);
    REQUIRE(x86 != nullptr);
    std::vector<float> first;
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      ThreadedOpRunner r;
      st = r.plan(*x86, OpType::kFastformerAttention, a, in, constant, threads);
      REQUIRE_MESSAGE(st.ok(), st.message());
      HostTensor got, got1;
      REQUIRE(r.run(in, &got).ok());
      REQUIRE(r.run(in1, &got1).ok());
      REQUIRE(got.data.size() == want.data.size());
      for (size_t i = 0; i < got.data.size(); ++i)
        CHECK_MESSAGE(std::fabs(got.data[i] - want.data[i]) <= 2e-5 * scale, "element ", i, ": ", got.data[i],
                      " vs ", want.data[i]);
      for (size_t i = 0; i < got1.data.size(); ++i) CHECK(got1.data[i] == got.data[i]);
      if (first.empty())
        first = got.data;
      else
        CHECK(first == got.data);
    }
  }
}

}  // namespace

TEST_CASE("x86 FastformerAttention matches the reference on odd shapes (every ISA, 1 and 2 threads)") {
  std::mt19937 rng(5301);
  const Case cases[] = {
      {2, 13, 7, 1},     // 1 head, d = 7
      {2, 31, 21, 3},    // d = 7, one short block
      {1, 32, 48, 3},    // exactly one block
      {3, 33, 40, 5},    // a block of one token
      {2, 97, 64, 8},    // more heads than one score tile
      {2, 197, 192, 3},  // DeiT-Tiny's tokens and width
      {1, 1, 9, 3},      // one token: the softmaxes are 1
      {2, 70, 35, 7},    // d = 5
  };
  for (const Case& k : cases) {
    CAPTURE(k.batch);
    CAPTURE(k.n);
    CAPTURE(k.c);
    CAPTURE(k.heads);
    check_case(k, rng);
  }
}

}  // namespace test
}  // namespace vitrt
