// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// CumSum on the x86 backend (backends/cpu/x86/cum_sum.cpp) against the reference kernel, exactly (both sum
// in float32 in the axis' order): random odd shapes, every axis (negative too), exclusive and reverse, every
// ISA, 1 and 2 threads; and hand-checked sums on both, including one where float32's order shows.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {

TEST_CASE("x86 CumSum matches the reference exactly on random shapes and axes (every ISA, 1 and 2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(4646);
  const int64_t sizes[] = {1, 2, 3, 7, 17, 64, 255, 257, 1000};
  int checked = 0;
  for (int trial = 0; trial < 100; ++trial) {
    Shape s;
    s.rank = 1 + static_cast<int>(rng() % 4);
    int64_t n = 1;
    for (int d = 0; d < s.rank; ++d) {
      s.dims[d] = sizes[rng() % 9];
      if (n * s.dims[d] > 400000) s.dims[d] = 1 + static_cast<int64_t>(rng() % 4);
      n *= s.dims[d];
    }
    CumSumAttrs a;
    a.axis = static_cast<int32_t>(rng() % s.rank) - (rng() % 2 ? s.rank : 0);
    a.exclusive = rng() % 2;
    a.reverse = rng() % 2;
    HostTensor x = random_tensor(s, rng, 3.0f, 0.5f);
    INFO(s.str(), " axis ", a.axis, " exclusive ", a.exclusive, " reverse ", a.reverse);
    const std::vector<const HostTensor*> in{&x};
    ThreadedOpRunner rr;
    Status st = rr.plan(*ref, OpType::kCumSum, a, in, {false}, 1);
    REQUIRE_MESSAGE(st.ok(), st.message());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        ThreadedOpRunner r;
        st = r.plan(*x86, OpType::kCumSum, a, in, {false}, threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        HostTensor got;
        REQUIRE(r.run(in, &got).ok());  // the runner poisons the output with NaN first
        CHECK(got.shape == want.shape);
        CHECK(got.data == want.data);
      }
    }
    ++checked;
  }
  MESSAGE("checked ", checked, " random CumSum cases");
}

TEST_CASE("CumSum's hand-checked sums and float32 order (numpy.cumsum in float32) on ref and x86") {
  struct Case {
    std::vector<float> x;
    bool exclusive, reverse;
    std::vector<float> want;
  };
  const Case cases[] = {
      {{1, 2, 3, 4, 5}, false, false, {1, 3, 6, 10, 15}},
      {{1, 2, 3, 4, 5}, true, false, {0, 1, 3, 6, 10}},
      {{1, 2, 3, 4, 5}, false, true, {15, 14, 12, 9, 5}},
      {{1, 2, 3, 4, 5}, true, true, {14, 12, 9, 5, 0}},
      // float32, in order: 1e8 + 1 rounds to 1e8, so the sum after -1e8 is 0, then 1 (in double: 1e8 + 1, 1,
      // 2). numpy.cumsum of a float32 array gives these values.
      {{1e8f, 1, -1e8f, 1}, false, false, {1e8f, 1e8f, 0, 1}},
      {{1, -1e8f, 1, 1e8f}, false, true, {1, 0, 1e8f, 1e8f}},
  };
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(create_reference_backend());
  for (X86Isa isa : isa_levels()) backends.push_back(make_x86(isa));
  for (const Case& c : cases) {
    // The row along axis 1 of [2, n, 3]: the same values in every slice and column.
    const int64_t n = static_cast<int64_t>(c.x.size());
    HostTensor x;
    x.shape = Shape{2, n, 3};
    for (int o = 0; o < 2; ++o)
      for (int64_t k = 0; k < n; ++k)
        for (int i = 0; i < 3; ++i) x.data.push_back(c.x[static_cast<size_t>(k)]);
    for (auto& be : backends) {
      CAPTURE(be->name());
      CAPTURE(c.exclusive);
      CAPTURE(c.reverse);
      ThreadedOpRunner r;
      const std::vector<const HostTensor*> in{&x};
      REQUIRE(r.plan(*be, OpType::kCumSum, CumSumAttrs{1, c.exclusive, c.reverse}, in, {false}, 2).ok());
      HostTensor got;
      REQUIRE(r.run(in, &got).ok());
      for (int o = 0; o < 2; ++o)
        for (int64_t k = 0; k < n; ++k)
          for (int i = 0; i < 3; ++i)
            CHECK(got.data[static_cast<size_t>((o * n + k) * 3 + i)] == c.want[static_cast<size_t>(k)]);
    }
  }
}

}  // namespace test
}  // namespace vitrt
