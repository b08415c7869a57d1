// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Unary on the x86 backend (backends/cpu/x86/unary.cpp) against the reference kernel for every UnaryKind, bit
// for bit except Sigmoid and Silu (vector exp: within 1e-6 relative, 1e-35 absolute, where the reference is
// finite; the same NaN and infinities): sizes 1, 7, 33 and beyond one thread chunk (4096 elements, odd),
// random values mixed with special ones (±0, ±inf, NaN, huge, tiny, halves), every ISA the machine has, 1 and
// 2 threads. The runner poisons the output with NaN first, so an unwritten element shows wherever the
// reference's value is not NaN.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/unary_attrs.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

// Each kind with the parameters it takes (several for the parameterised kinds); 0 where unused.
std::vector<UnaryAttrs> all_unary_cases() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<UnaryAttrs> v;
  for (int k = 0; k < kNumUnaryKinds; ++k) {
    const UnaryKind kind = static_cast<UnaryKind>(k);
    switch (kind) {
      case UnaryKind::kLeakyRelu:
        v.push_back({kind, 0.01f, 0.0f});
        v.push_back({kind, -1.5f, 0.0f});
        break;
      case UnaryKind::kElu:
        v.push_back({kind, 1.0f, 0.0f});
        v.push_back({kind, 0.3f, 0.0f});
        break;
      case UnaryKind::kHardSigmoid:
        v.push_back({kind, 0.2f, 0.5f});
        v.push_back({kind, 1.0f / 6.0f, 0.5f});
        break;
      case UnaryKind::kSelu:
        v.push_back({kind, 1.67326319217681884765625f, 1.05070102214813232421875f});
        break;
      case UnaryKind::kCelu:
        v.push_back({kind, 1.0f, 0.0f});
        v.push_back({kind, -0.3f, 0.0f});
        break;
      case UnaryKind::kThresholdedRelu:
        v.push_back({kind, 1.0f, 0.0f});
        break;
      case UnaryKind::kShrink:
        v.push_back({kind, 0.5f, 0.0f});
        v.push_back({kind, 0.5f, 0.5f});
        break;
      case UnaryKind::kClip:
        v.push_back({kind, 0.0f, 6.0f});
        v.push_back({kind, -inf, 1.5f});
        v.push_back({kind, -0.5f, inf});
        v.push_back({kind, 2.0f, -1.0f});  // lo > hi: every value becomes hi
        break;
      default:
        v.push_back({kind, 0.0f, 0.0f});
    }
  }
  return v;
}

HostTensor unary_input(int64_t n, std::mt19937& rng) {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f,    -0.0f,  inf,   -inf,   std::numeric_limits<float>::quiet_NaN(),
                            1e30f,   -1e30f, 88.8f, -88.8f, 1e-40f,
                            -1e-40f, 0.5f,   -0.5f, 2.5f,   -3.0f,
                            3.0f,    6.0f,   -6.0f, 1.0f,   -1.0f,
                            -88.5f,  88.5f};
  HostTensor t = random_tensor(Shape{n}, rng, 4.0f);
  // Specials at the start (vector body) and, for longer inputs, in the last few (the tail) and at random.
  const int64_t num_specials = static_cast<int64_t>(sizeof(specials) / sizeof(specials[0]));
  for (int64_t i = 0; i < num_specials && i < n; ++i) t.data[i] = specials[i];
  if (n > 2 * num_specials) {
    for (int64_t i = 0; i < 5; ++i) t.data[n - 1 - i] = specials[i];
    for (int i = 0; i < 40; ++i) t.data[rng() % n] = specials[rng() % num_specials];
  }
  return t;
}

// Bit-identical, except that any NaN matches any NaN (its sign and payload are not meaningful).
bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  return ua == ub;
}

// Sigmoid and Silu run the vector GELU's exp (gelu_vec_impl.h, ~1e-7 relative; the GELU built on it is
// tested to 3e-6 relative in packed_gemm_tiles_test.cpp). Where the reference's value is not finite, the
// same; else within 1e-6 relative, or 1e-35 absolute where e^-x leaves the vector exp's clamped range.
bool uses_vector_exp(UnaryKind k) {
  return k == UnaryKind::kSigmoid || k == UnaryKind::kSilu;
}

bool close_float(float got, float want) {
  if (!std::isfinite(want)) return same_float(got, want);
  return std::fabs(static_cast<double>(got) - want) <= 1e-6 * std::fabs(want) + 1e-35;
}

}  // namespace

TEST_CASE(
    "x86 Unary matches the reference (bit for bit, or within the vector exp tolerance) for every kind (every "
    "ISA, 1-2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(2222);
  const int64_t sizes[] = {1, 7, 33, 1001, 9001};
  int checked = 0;
  double worst_rel = 0;  // Sigmoid's and Silu's
  for (const UnaryAttrs& a : all_unary_cases()) {
    REQUIRE(unary_attrs_problem(a).empty());
    for (int64_t n : sizes) {
      const HostTensor x = unary_input(n, rng);
      INFO(std::string(unary_kind_name(a.kind)), " alpha ", a.alpha, " beta ", a.beta, " n ", n);
      const std::vector<const HostTensor*> in{&x};
      ThreadedOpRunner rr;
      Status st = rr.plan(*ref, OpType::kUnary, a, in, {false}, 1);
      REQUIRE_MESSAGE(st.ok(), st.message());
      HostTensor want;
      REQUIRE(rr.run(in, &want).ok());
      for (X86Isa isa : isa_levels()) {
        auto x86 = make_x86(isa);
        for (int threads : {1, 2}) {
          CAPTURE(threads);
          ThreadedOpRunner r;
          st = r.plan(*x86, OpType::kUnary, a, in, {false}, threads);
          REQUIRE_MESSAGE(st.ok(), st.message());
          HostTensor got;
          REQUIRE(r.run(in, &got).ok());
          REQUIRE(got.shape == want.shape);
          const bool approx = uses_vector_exp(a.kind);
          int64_t bad = -1;
          for (int64_t i = 0; i < n && bad < 0; ++i) {
            const bool ok =
                approx ? close_float(got.data[i], want.data[i]) : same_float(got.data[i], want.data[i]);
            if (!ok) bad = i;
            if (approx && std::isfinite(want.data[i]) && std::fabs(want.data[i]) > 1e-30f)
              worst_rel = std::max(worst_rel, std::fabs(static_cast<double>(got.data[i]) - want.data[i]) /
                                                  std::fabs(want.data[i]));
          }
          if (bad >= 0)
            FAIL_CHECK("element ", bad, " of x = ", x.data[bad], ": x86 ", got.data[bad], ", reference ",
                       want.data[bad]);
          ++checked;
        }
      }
    }
  }
  MESSAGE("checked ", checked, " x86 Unary runs; Sigmoid / Silu worst relative error ", worst_rel);
}

// The values that make the vectorised kinds' comparisons non-trivial, against hand-written expectations, so
// that the reference and x86 cannot agree on a wrong answer.
TEST_CASE("x86 Unary special values: HardSwish, Clip, LeakyRelu, Round, Sqrt by hand") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor x;
  x.shape = Shape{7};
  x.data = {-inf, -3.0f, -0.0f, 1.5f, 2.5f, inf, nan};
  struct Case {
    UnaryAttrs a;
    std::vector<float> want;
  };
  const Case cases[] = {
      // HardSwish(-inf) = -inf·0 = NaN, as x·clamp(x/6 + 1/2, 0, 1) in float (ONNX's formula; torch's too).
      {{UnaryKind::kHardSwish, 0, 0},
       {nan, -0.0f, -0.0f, 1.5f * (1.5f / 6.0f + 0.5f), 2.5f * (2.5f / 6.0f + 0.5f), inf, nan}},
      {{UnaryKind::kClip, 0.0f, 2.0f}, {0.0f, 0.0f, -0.0f, 1.5f, 2.0f, 2.0f, nan}},
      {{UnaryKind::kLeakyRelu, 0.5f, 0}, {-inf, -1.5f, -0.0f, 1.5f, 2.5f, inf, nan}},
      {{UnaryKind::kRound, 0, 0}, {-inf, -3.0f, -0.0f, 2.0f, 2.0f, inf, nan}},
      {{UnaryKind::kSqrt, 0, 0}, {nan, nan, -0.0f, std::sqrt(1.5f), std::sqrt(2.5f), inf, nan}},
  };
  const std::vector<const HostTensor*> in{&x};
  for (const Case& c : cases) {
    INFO(std::string(unary_kind_name(c.a.kind)));
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      ThreadedOpRunner r;
      Status st = r.plan(*x86, OpType::kUnary, c.a, in, {false}, 2);
      REQUIRE_MESSAGE(st.ok(), st.message());
      HostTensor got;
      REQUIRE(r.run(in, &got).ok());
      for (size_t i = 0; i < c.want.size(); ++i) {
        CAPTURE(i);
        CHECK(same_float(got.data[i], c.want[i]));
      }
    }
  }
}

}  // namespace test
}  // namespace vitrt
