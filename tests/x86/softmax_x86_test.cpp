// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Softmax on the x86 backend (backends/cpu/x86/softmax.cpp) against the reference kernel: random shapes with
// odd row lengths (1 to 1001, and Swin's 49), every axis written positive and negative (the last one: rows;
// others: vectors across the columns after the axis, with column tails), values far from 0 (the max
// subtraction), -inf entries (exp 0) and whole -inf rows where the axis has one element; every ISA the
// machine has, 1 and 2 threads. Within 5e-6 relative per element: the reference's exp is std::exp with a
// double sum, x86's the vector exp of flash attention (~1-2 ulp) with float partial sums over at most 1024
// elements (the worst case of their rounding is ~4e-6 relative; the measured worst is printed).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {

TEST_CASE(
    "x86 Softmax matches the reference on odd row lengths and every axis (every ISA, 1 and 2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(4949);
  const int64_t sizes[] = {1, 2, 3, 7, 16, 17, 33, 49, 64, 130, 1001};
  const int64_t num_sizes = static_cast<int64_t>(sizeof(sizes) / sizeof(sizes[0]));
  const float ninf = -std::numeric_limits<float>::infinity();
  int checked = 0;
  double worst = 0;
  for (int trial = 0; trial < 80; ++trial) {
    Shape s;
    s.rank = 1 + static_cast<int>(rng() % 4);
    int64_t n = 1;
    for (int d = 0; d < s.rank; ++d) {
      s.dims[d] = sizes[rng() % num_sizes];
      if (n * s.dims[d] > 150000) s.dims[d] = 1 + static_cast<int64_t>(rng() % 5);
      n *= s.dims[d];
    }
    if (trial == 0) s = Shape{64, 3, 49, 49};  // Swin-T's first-stage window attention, threaded rows
    if (trial == 1) s = Shape{3, 130, 97};     // axis 1 below: column blocks of 64 and a tail of 33
    const int ax = trial == 1 ? 1 : static_cast<int>(rng() % s.rank);
    SoftmaxAttrs a;
    a.axis = ax - (rng() % 2 ? s.rank : 0);
    HostTensor x = random_tensor(s, rng, 3.0f, trial % 3 == 0 ? 60.0f : 0.0f);
    if (trial % 4 == 1)
      for (int j = 0; j < 1 + static_cast<int>(x.data.size() / 20); ++j) x.data[rng() % x.data.size()] = ninf;
    INFO(s.str(), " axis ", a.axis);
    const std::vector<const HostTensor*> in{&x};
    ThreadedOpRunner rr;
    Status st = rr.plan(*ref, OpType::kSoftmax, a, in, {false}, 1);
    REQUIRE_MESSAGE(st.ok(), st.message());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        ThreadedOpRunner r;
        st = r.plan(*x86, OpType::kSoftmax, a, in, {false}, threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        HostTensor got;
        REQUIRE(r.run(in, &got).ok());  // the runner poisons the output with NaN first
        REQUIRE(got.shape == want.shape);
        int64_t bad = -1;
        for (size_t i = 0; i < got.data.size() && bad < 0; ++i) {
          const double w = want.data[i], g = got.data[i];
          if (std::isnan(w)) {  // a whole -inf line: 0/0 on both
            if (!std::isnan(g)) bad = static_cast<int64_t>(i);
            continue;
          }
          const double err = std::fabs(g - w);
          if (!(err <= 5e-6 * std::fabs(w) + 1e-37)) bad = static_cast<int64_t>(i);
          if (w > 1e-30) worst = std::max(worst, err / w);
        }
        if (bad >= 0)
          FAIL_CHECK("element ", bad, " (x = ", x.data[bad], "): x86 ", got.data[bad], ", reference ",
                     want.data[bad]);
        ++checked;
      }
    }
  }
  MESSAGE("checked ", checked, " x86 Softmax runs; worst relative difference ", worst);
}

// By hand, so that the reference and x86 cannot agree on a wrong answer: a row of 17 (one vector and a tail
// on AVX-512, two and a tail on AVX2) with -inf entries and a large offset, along the last and the first
// axis.
TEST_CASE("x86 Softmax by hand: -inf entries, an offset of 1000, rows and columns") {
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> row(17);
  double total = 0;
  for (int j = 0; j < 17; ++j) {
    row[j] = j % 5 == 2 ? ninf : 1000.0f + 0.25f * static_cast<float>(j);
    total += j % 5 == 2 ? 0.0 : std::exp(0.25 * (j - 16));
  }
  for (int axis : {1, 0}) {
    HostTensor x;
    x.shape = axis == 1 ? Shape{2, 17} : Shape{17, 2};
    for (int i = 0; i < 34; ++i) x.data.push_back(axis == 1 ? row[i % 17] : row[i / 2]);
    const std::vector<const HostTensor*> in{&x};
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      ThreadedOpRunner r;
      Status st = r.plan(*x86, OpType::kSoftmax, SoftmaxAttrs{axis}, in, {false}, 2);
      REQUIRE_MESSAGE(st.ok(), st.message());
      HostTensor got;
      REQUIRE(r.run(in, &got).ok());
      for (int i = 0; i < 34; ++i) {
        const int j = axis == 1 ? i % 17 : i / 2;
        const double want = j % 5 == 2 ? 0.0 : std::exp(0.25 * (j - 16)) / total;
        CAPTURE(axis);
        CAPTURE(i);
        CHECK(std::fabs(got.data[i] - want) <= 1e-6 * want);
      }
    }
  }
}

}  // namespace test
}  // namespace vitrt
