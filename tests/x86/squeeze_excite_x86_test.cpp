// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SqueezeExcite on the x86 backend (vector sums and dot products, planes split over the threads, images in
// chunks) against the reference kernel on odd shapes: every activation and gate, with and without biases,
// weights as [Cr,C] and as 1x1 convs, every ISA, 1 and 2 threads, a smaller batch than planned, and a map
// large enough to be split over the threads and into chunks. The x86 kernel sums in float blocks and dot
// products in float vectors where the reference sums in double and in input order: same values to rounding.
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
  int64_t cr;
  SqueezeExciteAttrs attrs;
  bool bias = true;
  bool conv_weights = false;  // [Cr,C,1,1] and [C,Cr,1,1]
};

// x86 against the reference on `k` at its planned batch and, when larger than 1, at batch 1.
void check_case(const Case& k, std::mt19937& rng) {
  const int64_t c = k.x[1];
  const HostTensor x = random_tensor(k.x, rng, 1.0f, 0.3f);
  const Shape w1s = k.conv_weights ? Shape{k.cr, c, 1, 1} : Shape{k.cr, c};
  const Shape w2s = k.conv_weights ? Shape{c, k.cr, 1, 1} : Shape{c, k.cr};
  const HostTensor w1 = random_tensor(w1s, rng, 1.0f / std::sqrt(float(c)));
  const HostTensor w2 = random_tensor(w2s, rng, 1.0f / std::sqrt(float(k.cr)));
  const HostTensor b1 = random_tensor(Shape{k.cr}, rng, 0.5f), b2 = random_tensor(Shape{c}, rng, 0.5f);
  const std::vector<const HostTensor*> in{&x, &w1, k.bias ? &b1 : nullptr, &w2, k.bias ? &b2 : nullptr};
  const std::vector<bool> constant{false, true, true, true, true};
  auto ref = create_reference_backend();
  OpRunner rr;
  REQUIRE(rr.plan(*ref, OpType::kSqueezeExcite, k.attrs, in, constant).ok());
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
      Status st = r.plan(*x86, OpType::kSqueezeExcite, k.attrs, in, constant, threads);
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

TEST_CASE("x86 SqueezeExcite matches the reference on odd shapes (every gate, ISA, 1 and 2 threads)") {
  std::mt19937 rng(3823);
  SqueezeExciteAttrs relu_sigmoid, silu_sigmoid, relu_hard;
  silu_sigmoid.activation = SqueezeActivation::kSilu;
  relu_hard.gate = ExciteGate::kHardSigmoid;
  relu_hard.gate_alpha = 1.0f / 6.0f;
  relu_hard.gate_beta = 0.5f;
  SqueezeExciteAttrs onnx_hard = relu_hard;  // ONNX HardSigmoid's defaults
  onnx_hard.activation = SqueezeActivation::kSilu;
  onnx_hard.gate_alpha = 0.2f;
  const Case cases[] = {
      {Shape{3, 13, 7, 9}, 5, relu_sigmoid},
      {Shape{2, 37, 11, 1}, 9, silu_sigmoid, false},
      {Shape{1, 24, 5, 3}, 6, relu_hard, true, true},
      {Shape{3, 19, 1, 1}, 7, onnx_hard},
      {Shape{2, 33, 17, 15}, 1, relu_sigmoid, true, true},  // a single hidden unit
      {Shape{2, 70, 3, 41}, 18, silu_sigmoid},
      {Shape{1, 5, 1, 129}, 3, relu_hard, false, true},
  };
  for (const Case& k : cases) {
    CAPTURE(k.x.str());
    CAPTURE(k.cr);
    check_case(k, rng);
  }
}

TEST_CASE(
    "x86 SqueezeExcite splits large maps over the threads (whole images or planes) with the same result") {
  // At 2 threads (from 2^20 elements of x): [4,64,64,65] gives each thread two whole images; [5,64,57,61]
  // (5 images do not divide) splits the planes; [3,100,60,60] with Cr = 400 also splits the layers' rows.
  std::mt19937 rng(41);
  SqueezeExciteAttrs hard;
  hard.gate = ExciteGate::kHardSigmoid;
  hard.gate_alpha = 1.0f / 6.0f;
  hard.gate_beta = 0.5f;
  SqueezeExciteAttrs silu;
  silu.activation = SqueezeActivation::kSilu;
  check_case(Case{Shape{4, 64, 64, 65}, 10, silu}, rng);
  check_case(Case{Shape{5, 64, 57, 61}, 16, hard}, rng);
  check_case(Case{Shape{3, 100, 60, 60}, 400, SqueezeExciteAttrs{}, true, true}, rng);
}

}  // namespace test
}  // namespace vitrt
