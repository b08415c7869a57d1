// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ArgMax / ArgMin on the x86 backend (backends/cpu/x86/arg_max.cpp) against the reference kernel, exactly:
// random axes of odd shapes (inner sizes below, at and above its 64-lane blocks, sizes large enough to
// thread), both kinds, select_last_index both ways, inputs with many ties, NaNs and ±inf, every ISA, 1 and 2
// threads.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {

TEST_CASE(
    "x86 ArgMax matches the reference exactly on random axes, ties and NaNs (every ISA, 1 and 2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(4242);
  const int64_t sizes[] = {1, 2, 3, 7, 17, 63, 64, 65, 130, 1000};
  int checked = 0;
  for (int trial = 0; trial < 120; ++trial) {
    Shape s;
    s.rank = 1 + static_cast<int>(rng() % 4);
    int64_t n = 1;
    for (int d = 0; d < s.rank; ++d) {
      s.dims[d] = sizes[rng() % 10];
      if (n * s.dims[d] > 400000) s.dims[d] = 1 + static_cast<int64_t>(rng() % 5);
      n *= s.dims[d];
    }
    ArgMaxAttrs a;
    a.kind = rng() % 2 ? ArgKind::kMin : ArgKind::kMax;
    a.axis = static_cast<int32_t>(rng() % s.rank) - (rng() % 2 ? s.rank : 0);  // negative half the time
    a.keepdims = rng() % 2;
    a.select_last_index = rng() % 2;
    HostTensor x = random_tensor(s, rng);
    if (trial % 2 == 0)  // few distinct values: ties everywhere
      for (float& v : x.data) v = std::round(v * 1.5f);
    if (trial % 3 == 0) {
      for (int k = 0; k < 1 + static_cast<int>(x.data.size() / 16); ++k)
        x.data[rng() % x.data.size()] = std::numeric_limits<float>::quiet_NaN();
      x.data[rng() % x.data.size()] = std::numeric_limits<float>::infinity();
      x.data[rng() % x.data.size()] = -std::numeric_limits<float>::infinity();
    }
    INFO(s.str(), a.kind == ArgKind::kMax ? " argmax" : " argmin", " axis ", a.axis, " keepdims ", a.keepdims,
         " last ", a.select_last_index);
    const std::vector<const HostTensor*> in{&x};
    ThreadedOpRunner rr;
    Status st = rr.plan(*ref, OpType::kArgMax, a, in, {false}, 1);
    REQUIRE_MESSAGE(st.ok(), st.message());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        ThreadedOpRunner r;
        st = r.plan(*x86, OpType::kArgMax, a, in, {false}, threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        HostTensor got;
        REQUIRE(r.run(in, &got).ok());
        CHECK(got.shape == want.shape);
        CHECK(got.data == want.data);
      }
    }
    ++checked;
  }
  MESSAGE("checked ", checked, " random ArgMax cases");
}

TEST_CASE("ArgMax's NaN and tie rules (numpy.argmax / argmin, ONNX select_last_index) on ref and x86") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Case {
    std::vector<float> row;
    ArgKind kind;
    bool last;
    float want;
  };
  const Case cases[] = {
      {{1, 3, 3, 2}, ArgKind::kMax, false, 1},
      {{1, 3, 3, 2}, ArgKind::kMax, true, 2},
      {{2, 0, 5, 0}, ArgKind::kMin, false, 1},
      {{2, 0, 5, 0}, ArgKind::kMin, true, 3},
      {{1, nan, 9, nan}, ArgKind::kMax, false, 1},
      {{1, nan, 9, nan}, ArgKind::kMax, true, 3},
      {{1, nan, -9, nan}, ArgKind::kMin, false, 1},
      {{1, nan, -9, nan}, ArgKind::kMin, true, 3},
      {{-inf, -inf}, ArgKind::kMax, false, 0},
      {{inf, 4, inf}, ArgKind::kMax, true, 2},
      {{nan}, ArgKind::kMin, false, 0},
      {{nan, 1}, ArgKind::kMax, true, 0},
  };
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(create_reference_backend());
  for (X86Isa isa : isa_levels()) backends.push_back(make_x86(isa));
  for (const Case& c : cases) {
    HostTensor x;
    x.shape = Shape{1, static_cast<int64_t>(c.row.size())};
    x.data = c.row;
    ArgMaxAttrs a;
    a.kind = c.kind;
    a.axis = 1;
    a.keepdims = false;
    a.select_last_index = c.last;
    for (auto& be : backends) {
      ThreadedOpRunner r;
      const std::vector<const HostTensor*> in{&x};
      REQUIRE(r.plan(*be, OpType::kArgMax, a, in, {false}, 1).ok());
      HostTensor got;
      REQUIRE(r.run(in, &got).ok());
      REQUIRE(got.data.size() == 1);
      CHECK_MESSAGE(got.data[0] == c.want, be->name(), ": got ", got.data[0], " want ", c.want);
    }
  }
}

}  // namespace test
}  // namespace vitrt
