// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// TopK on the x86 backend (backends/cpu/x86/top_k.cpp) against the reference kernel, exactly, both outputs:
// random odd shapes and axes, k from 1 to the whole axis, largest and smallest, inputs with many ties, NaNs
// and ±inf, every ISA, 1 and 2 threads; and hand-checked lines on both (ties lower index first, NaN placed as
// numpy.sort places it).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {

TEST_CASE(
    "x86 TopK matches the reference exactly on random axes, ties and NaNs (every ISA, 1 and 2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(4747);
  const int64_t sizes[] = {1, 2, 3, 7, 17, 64, 130, 1000};
  int checked = 0;
  for (int trial = 0; trial < 100; ++trial) {
    Shape s;
    s.rank = 1 + static_cast<int>(rng() % 4);
    int64_t n = 1;
    for (int d = 0; d < s.rank; ++d) {
      s.dims[d] = sizes[rng() % 8];
      if (n * s.dims[d] > 200000) s.dims[d] = 1 + static_cast<int64_t>(rng() % 4);
      n *= s.dims[d];
    }
    TopKAttrs a;
    const int ax = static_cast<int>(rng() % s.rank);
    a.axis = ax - (rng() % 2 ? s.rank : 0);
    a.k = trial % 5 == 0 ? s.dims[ax] : 1 + static_cast<int64_t>(rng() % s.dims[ax]);
    a.largest = rng() % 2;
    HostTensor x = random_tensor(s, rng);
    if (trial % 2 == 0)
      for (float& v : x.data) v = std::round(v * 1.5f);  // few distinct values: ties everywhere
    if (trial % 3 == 0) {
      for (int j = 0; j < 1 + static_cast<int>(x.data.size() / 16); ++j)
        x.data[rng() % x.data.size()] = std::numeric_limits<float>::quiet_NaN();
      x.data[rng() % x.data.size()] = std::numeric_limits<float>::infinity();
      x.data[rng() % x.data.size()] = -std::numeric_limits<float>::infinity();
    }
    INFO(s.str(), " axis ", a.axis, " k ", a.k, a.largest ? " largest" : " smallest");
    const std::vector<const HostTensor*> in{&x};
    // Output `index` (0 values, 1 indices) of the op on `be`.
    auto run = [&](Backend& be, int threads, int index) {
      ThreadedOpRunner r;
      r.select_outputs(2, index);
      Status st = r.plan(be, OpType::kTopK, a, in, {false}, threads);
      REQUIRE_MESSAGE(st.ok(), st.message());
      HostTensor got;
      st = r.run(in, &got);  // the runner poisons both outputs with NaN first
      REQUIRE_MESSAGE(st.ok(), st.message());
      return got;
    };
    const HostTensor want_v = run(*ref, 1, 0), want_i = run(*ref, 1, 1);
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        const HostTensor got_v = run(*x86, threads, 0), got_i = run(*x86, threads, 1);
        CHECK(got_i.shape == want_i.shape);
        CHECK(got_i.data == want_i.data);
        REQUIRE(got_v.data.size() == want_v.data.size());
        for (size_t e = 0; e < got_v.data.size(); ++e)
          CHECK(
              (got_v.data[e] == want_v.data[e] || (std::isnan(got_v.data[e]) && std::isnan(want_v.data[e]))));
      }
    }
    ++checked;
  }
  MESSAGE("checked ", checked, " random TopK cases");
}

TEST_CASE("TopK's order by hand: ties lower index first, NaN above every number (ref and x86)") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    std::vector<float> row;
    int64_t k;
    bool largest;
    std::vector<float> values, indices;
  };
  const Case cases[] = {
      {{0, 1, 2, 3}, 3, true, {3, 2, 1}, {3, 2, 1}},
      {{5, 1, 5, 3, 1}, 4, true, {5, 5, 3, 1}, {0, 2, 3, 1}},
      {{5, 1, 5, 3, 1}, 3, false, {1, 1, 3}, {1, 4, 3}},
      {{2, nan, 7, nan}, 3, true, {nan, nan, 7}, {1, 3, 2}},
      {{2, nan, 7, nan}, 3, false, {2, 7, nan}, {0, 2, 1}},
      {{4}, 1, false, {4}, {0}},
  };
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(create_reference_backend());
  for (X86Isa isa : isa_levels()) backends.push_back(make_x86(isa));
  for (const Case& c : cases) {
    HostTensor x;
    x.shape = Shape{1, static_cast<int64_t>(c.row.size())};
    x.data = c.row;
    const std::vector<const HostTensor*> in{&x};
    for (auto& be : backends) {
      CAPTURE(be->name());
      CAPTURE(c.k);
      CAPTURE(c.largest);
      for (int index : {0, 1}) {
        ThreadedOpRunner r;
        r.select_outputs(2, index);
        REQUIRE(r.plan(*be, OpType::kTopK, TopKAttrs{1, c.k, c.largest}, in, {false}, 1).ok());
        HostTensor got;
        REQUIRE(r.run(in, &got).ok());
        const std::vector<float>& want = index == 0 ? c.values : c.indices;
        REQUIRE(got.data.size() == want.size());
        for (size_t e = 0; e < want.size(); ++e)
          CHECK((got.data[e] == want[e] || (std::isnan(got.data[e]) && std::isnan(want[e]))));
      }
    }
  }
}

}  // namespace test
}  // namespace vitrt
