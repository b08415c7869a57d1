// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SelectiveKernel on the x86 backend (vector plane sums, one FMA per branch in the weighted sum, planes split
// over the threads) against the reference kernel on odd shapes: 1 to 5 branches, every optional input
// present or absent, weights as [rows, cols] and as 1x1 convs, every ISA, 1 and 2 threads, a smaller batch
// than planned, and maps large enough to be split over the threads. The x86 kernel sums in float blocks and
// accumulates the weighted sum in float where the reference sums in double: the same values to rounding.
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
  Shape x;
  int64_t d;
  SelectiveKernelAttrs attrs;
  bool reduce_bias = true, z_bn = true, select_bias = true;
  bool conv_weights = false;  // [d,C,1,1] and [M·C,d,1,1]
};

// x86 against the reference on `k` at its planned batch and, when larger than 1, at batch 1.
void check_case(const Case& k, std::mt19937& rng) {
  const int64_t c = k.x[1], m = k.attrs.branches;
  std::vector<HostTensor> branches;
  for (int64_t i = 0; i < m; ++i) branches.push_back(random_tensor(k.x, rng, 1.0f, 0.3f));
  const Shape wrs = k.conv_weights ? Shape{k.d, c, 1, 1} : Shape{k.d, c};
  const Shape wss = k.conv_weights ? Shape{m * c, k.d, 1, 1} : Shape{m * c, k.d};
  const HostTensor wr = random_tensor(wrs, rng, 1.0f / std::sqrt(float(c)));
  const HostTensor ws = random_tensor(wss, rng, 2.0f / std::sqrt(float(k.d)));
  const HostTensor br = random_tensor(Shape{k.d}, rng, 0.3f), bs = random_tensor(Shape{m * c}, rng, 0.5f);
  const HostTensor scale = random_tensor(Shape{k.d}, rng, 0.3f, 1.0f),
                   shift = random_tensor(Shape{k.d}, rng, 0.3f);
  std::vector<const HostTensor*> in;
  std::vector<bool> constant;
  for (const HostTensor& b : branches) {
    in.push_back(&b);
    constant.push_back(false);
  }
  for (const HostTensor* w : {&wr, k.reduce_bias ? &br : nullptr, k.z_bn ? &scale : nullptr,
                              k.z_bn ? &shift : nullptr, &ws, k.select_bias ? &bs : nullptr}) {
    in.push_back(w);
    constant.push_back(true);
  }
  while (!in.back()) {
    in.pop_back();
    constant.pop_back();
  }
  auto ref = create_reference_backend();
  OpRunner rr;
  Status planned = rr.plan(*ref, OpType::kSelectiveKernel, k.attrs, in, constant);
  REQUIRE_MESSAGE(planned.ok(), planned.message());
  HostTensor want, want1;
  REQUIRE(rr.run(in, &want).ok());
  std::vector<HostTensor> firsts;
  for (const HostTensor& b : branches) firsts.push_back(first_item(b));
  std::vector<const HostTensor*> in1 = in;
  for (int64_t i = 0; i < m; ++i) in1[i] = &firsts[i];
  REQUIRE(rr.run(in1, &want1).ok());
  double max_ref = 0;
  for (float v : want.data) max_ref = std::fmax(max_ref, std::fabs(v));
  REQUIRE(max_ref > 0.1);
  for (X86Isa isa : isa_levels()) {
    auto x86 = make_x86(isa);
    REQUIRE(x86 != nullptr);
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      ThreadedOpRunner r;
      Status st = r.plan(*x86, OpType::kSelectiveKernel, k.attrs, in, constant, threads);
      REQUIRE_MESSAGE(st.ok(), st.message());
      HostTensor got, got1;
      REQUIRE(r.run(in, &got).ok());
      REQUIRE(r.run(in1, &got1).ok());
      REQUIRE(got.data.size() == want.data.size());
      REQUIRE(got1.data.size() == want1.data.size());
      for (size_t i = 0; i < got.data.size(); ++i)
        CHECK_MESSAGE(std::fabs(got.data[i] - want.data[i]) <= 2e-6f * (1.0f + std::fabs(want.data[i])),
                      "element ", i, ": ", got.data[i], " vs ", want.data[i]);
      for (size_t i = 0; i < got1.data.size(); ++i) CHECK(got1.data[i] == got.data[i]);
    }
  }
}

}  // namespace

TEST_CASE(
    "x86 SelectiveKernel matches the reference on odd shapes (1-5 branches, every ISA, 1 and 2 threads)") {
  std::mt19937 rng(5411);
  const SelectiveKernelAttrs two{2, SelectiveKernelActivation::kRelu},
      four{4, SelectiveKernelActivation::kNone}, three{3, SelectiveKernelActivation::kRelu},
      one{1, SelectiveKernelActivation::kRelu}, five{5, SelectiveKernelActivation::kNone};
  const Case cases[] = {
      {Shape{2, 13, 7, 9}, 5, two, false, true, true, true},     // the survey's SKModule form
      {Shape{2, 11, 5, 3}, 7, four, true, false, true, false},   // xmu's SKAttention form
      {Shape{3, 17, 6, 5}, 8, three, false, true, false, true},  // timm's SelectiveKernelAttn form
      {Shape{2, 7, 3, 11}, 3, one},
      {Shape{3, 9, 1, 1}, 4, two, true, false, false},
      {Shape{1, 6, 1, 37}, 2, five, false, false, true, true},
      {Shape{2, 40, 13, 17}, 32, two, false, true, true, true},
  };
  for (const Case& k : cases) {
    CAPTURE(k.x.str());
    CAPTURE(k.attrs.branches);
    check_case(k, rng);
  }
}

TEST_CASE("x86 SelectiveKernel splits large maps over the threads with the same result") {
  // At 2 threads (from 2^20 floats read over all branches): [3,64,33,35] x 2 branches and [1,40,61,67] x 3
  // (an odd plane count per thread).
  std::mt19937 rng(77);
  check_case(Case{Shape{3, 64, 33, 35}, 32, SelectiveKernelAttrs{2, SelectiveKernelActivation::kRelu}}, rng);
  check_case(Case{Shape{1, 41, 61, 67}, 32, SelectiveKernelAttrs{3, SelectiveKernelActivation::kNone}, true,
                  false, false},
             rng);
}

}  // namespace test
}  // namespace vitrt
