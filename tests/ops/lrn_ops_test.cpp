// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LRN (core/ir/op_attrs.h, LrnAttrs) on ref and cpu against ONNX's definition evaluated in double on the
// same float inputs: odd shapes of rank 3, 4 and 5, window sizes odd and even (even ones reach one channel
// further after c than before it, as ONNX's floor / ceil of (size - 1) / 2 say), windows wider than the
// channels, outputs poisoned before the run; and the malformed attributes shape inference refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/x86/x86_backend.h"
#include "op_test_util.h"

namespace vitrt {
namespace test {
namespace {

// ONNX's LRN in double: the channels max(0, c - floor((size-1)/2)) .. min(C-1, c + ceil((size-1)/2)).
std::vector<double> lrn64(const HostTensor& x, const LrnAttrs& a) {
  const int64_t n = x.shape[0], c = x.shape[1], plane = x.shape.numel() / (n * c);
  std::vector<double> y(x.data.size());
  const int64_t before = (a.size - 1) / 2, after = a.size - 1 - before;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) {
        double sum = 0;
        for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
          const double v = x.data[(b * c + k) * plane + p];
          sum += v * v;
        }
        const size_t i = (b * c + ch) * plane + p;
        y[i] = x.data[i] / std::pow(double(a.bias) + double(a.alpha) / a.size * sum, double(a.beta));
      }
  return y;
}

}  // namespace

TEST_CASE("LRN: ONNX's window and formula on ref and cpu, odd shapes and sizes") {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(create_reference_backend());
  if (auto cpu = create_x86_backend()) backends.push_back(std::move(cpu));
  std::mt19937 rng(57);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  struct Case {
    Shape shape;
    LrnAttrs a;
  };
  const Case cases[] = {
      {Shape{2, 7, 3, 5}, {5, 1e-4f, 0.75f, 1.0f}},   // AlexNet's
      {Shape{1, 9, 4, 4}, {4, 0.02f, 0.5f, 2.0f}},    // even: one channel more after c
      {Shape{3, 5, 11}, {3, 0.3f, 0.75f, 1.0f}},      // rank 3
      {Shape{1, 4, 2, 3, 2}, {1, 0.5f, 1.0f, 0.5f}},  // rank 5, the channel alone
      {Shape{2, 3, 2, 2}, {9, 0.9f, 0.6f, 1.5f}},     // wider than the channels
      {Shape{1, 1, 1, 1}, {2, 1.0f, 0.25f, 1.0f}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.shape.str());
    CAPTURE(c.a.size);
    HostTensor x;
    x.shape = c.shape;
    for (int64_t i = 0; i < c.shape.numel(); ++i) x.data.push_back(normal(rng));
    const std::vector<double> want = lrn64(x, c.a);
    for (const auto& backend : backends) {
      CAPTURE(backend->name());
      OpRunner r;
      REQUIRE(r.plan(*backend, OpType::kLrn, c.a, {&x}, {false}, "lrn").ok());
      HostTensor out;
      REQUIRE(r.run({&x}, &out).ok());
      REQUIRE(out.shape == x.shape);
      for (size_t i = 0; i < want.size(); ++i)
        CHECK_MESSAGE(std::fabs(out.data[i] - want[i]) <= 2e-6 * std::fabs(want[i]) + 1e-30, "element ", i,
                      ": got ", out.data[i], ", expected ", want[i]);
    }
  }
}

TEST_CASE("LRN: a size below 1, non-finite parameters and an input below rank 3 are refused") {
  auto backend = create_reference_backend();
  HostTensor x, flat;
  x.shape = Shape{1, 3, 2, 2};
  x.data.assign(12, 1.0f);
  flat.shape = Shape{2, 6};
  flat.data.assign(12, 1.0f);
  struct Bad {
    const HostTensor* x;
    LrnAttrs a;
    const char* needle;
  };
  const Bad cases[] = {
      {&x, {0, 1e-4f, 0.75f, 1.0f}, "LRN: size 0, expected 1 or more"},
      {&x, {3, NAN, 0.75f, 1.0f}, "alpha, beta and bias must be finite"},
      {&x, {3, 1e-4f, INFINITY, 1.0f}, "must be finite"},
      {&x, {3, 1e-4f, 0.75f, -INFINITY}, "must be finite"},
      {&flat, {3, 1e-4f, 0.75f, 1.0f}, "expected [N,C,D1,...] (rank 3 or more)"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.needle);
    OpRunner r;
    const Status st = r.plan(*backend, OpType::kLrn, b.a, {b.x}, {false}, "lrn");
    CHECK(st.code() == StatusCode::kBadModel);
    CHECK_MESSAGE(st.message().find(b.needle) != std::string::npos, st.message());
  }
}

}  // namespace test
}  // namespace vitrt
