// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Trilu on the x86 backend (backends/cpu/x86/trilu.cpp) against the reference kernel, exactly, on random odd
// shapes (batch axes of any rank, 1-row and 1-column matrices) and diagonals inside, at and past the matrix
// edges (INT64 extremes included), every ISA, 1 and 2 threads; and one hand-checked matrix on both.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {

TEST_CASE("x86 Trilu matches the reference exactly on random shapes and diagonals (every ISA, 1-2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(4848);
  const int64_t sizes[] = {1, 2, 3, 5, 7, 16, 33, 130};
  const int64_t far_k[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -200,
                           200};
  int checked = 0;
  for (int trial = 0; trial < 80; ++trial) {
    Shape s;
    s.rank = 2 + static_cast<int>(rng() % 3);
    int64_t n = 1;
    for (int d = 0; d < s.rank; ++d) {
      s.dims[d] = sizes[rng() % 8];
      if (n * s.dims[d] > 300000) s.dims[d] = 1 + static_cast<int64_t>(rng() % 3);
      n *= s.dims[d];
    }
    TriluAttrs a;
    a.upper = rng() % 2;
    a.k = trial % 10 == 9 ? far_k[rng() % 4] : static_cast<int64_t>(rng() % 15) - 7;
    HostTensor x = random_tensor(s, rng);
    INFO(s.str(), a.upper ? " upper" : " lower", " k ", a.k);
    const std::vector<const HostTensor*> in{&x};
    ThreadedOpRunner rr;
    Status st = rr.plan(*ref, OpType::kTrilu, a, in, {false}, 1);
    REQUIRE_MESSAGE(st.ok(), st.message());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        ThreadedOpRunner r;
        st = r.plan(*x86, OpType::kTrilu, a, in, {false}, threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        HostTensor got;
        REQUIRE(r.run(in, &got).ok());  // the runner poisons the output with NaN first
        CHECK(got.shape == want.shape);
        CHECK(got.data == want.data);
      }
    }
    ++checked;
  }
  MESSAGE("checked ", checked, " random Trilu cases");
}

TEST_CASE("Trilu of hand-checked 3x4 matrices (numpy.triu / numpy.tril) on ref and x86") {
  HostTensor x;
  x.shape = Shape{2, 3, 4};
  for (int v = 1; v <= 24; ++v) x.data.push_back(static_cast<float>(v));
  struct Case {
    bool upper;
    int64_t k;
    std::vector<float> first;  // the first matrix of the result; the second is the same mask on 13..24
  };
  const Case cases[] = {
      {true, 0, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}},
      {true, 1, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}},
      {true, -1, {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}},
      {true, 4, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
      {false, 0, {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}},
      {false, 2, {1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12}},
      {false, -2, {0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0}},
      {false, -3, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
  };
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(create_reference_backend());
  for (X86Isa isa : isa_levels()) backends.push_back(make_x86(isa));
  for (const Case& c : cases) {
    std::vector<float> want = c.first;
    for (size_t e = 0; e < 12; ++e) want.push_back(c.first[e] == 0 ? 0.0f : c.first[e] + 12);
    for (auto& be : backends) {
      CAPTURE(be->name());
      CAPTURE(c.upper);
      CAPTURE(c.k);
      ThreadedOpRunner r;
      const std::vector<const HostTensor*> in{&x};
      REQUIRE(r.plan(*be, OpType::kTrilu, TriluAttrs{c.upper, c.k}, in, {false}, 2).ok());
      HostTensor got;
      REQUIRE(r.run(in, &got).ok());
      CHECK(got.data == want);
    }
  }
}

}  // namespace test
}  // namespace vitrt
