// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The Unary op (every UnaryKind) and the broadcasting Pow, Min, Max, Fmod, Mod on the reference backend, on
// odd shapes, against their formulas evaluated in double on the same float inputs: finite values over the
// range that matters (saturation included), signed zeros, infinities and NaN; plus in-place runs and the
// refusals of malformed attributes.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "backends/cpu/x86/x86_backend.h"
#include "op_test_util.h"
#include "ops/unary_attrs.h"

namespace vitrt {
namespace test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// [3,7,5] values: a sweep over [-12, 12] (odd count, so no value repeats a SIMD lane pattern), with the
// special values and the saturation points of exp/tanh/sigmoid/softplus placed among them.
HostTensor sweep() {
  HostTensor t;
  t.shape = Shape{3, 7, 5};
  const int64_t n = t.shape.numel();
  for (int64_t i = 0; i < n; ++i) t.data.push_back(-12.0f + 24.0f * static_cast<float>(i) / (n - 1));
  const float specials[] = {0.0f,    -0.0f, 1.0f,   -1.0f,  3.0f,    -3.0f,    -2.9999f,  6.0f, 1e-30f,
                            -1e-30f, 90.0f, -90.0f, 100.0f, -100.0f, INFINITY, -INFINITY, kNaN, 0.5f};
  for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); ++k) t.data[k * 5 + 2] = specials[k];
  return t;
}

// Round's rule written out: the nearer integer, a tie going to the even one; the sign of x kept (-0.4 -> -0).
double round_half_even(double x) {
  if (!std::isfinite(x)) return x;
  const double lo = std::floor(x), frac = x - lo;
  const double r = frac < 0.5 ? lo : frac > 0.5 ? lo + 1 : (std::fmod(lo, 2.0) == 0 ? lo : lo + 1);
  return std::copysign(r, x);
}

// numpy.mod in double: the remainder with the divisor's sign (the exact fmod remainder moved by q when the
// signs differ; a zero one signed as q).
double python_mod(double p, double q) {
  const double r = std::fmod(p, q);
  if (r == 0) return std::copysign(0.0, q);
  return (q < 0) != (r < 0) ? r + q : r;
}

// The formula of each kind in double.
double formula(const UnaryAttrs& a, double x) {
  const double alpha = a.alpha, beta = a.beta;
  auto clamp = [](double v, double lo, double hi) {
    return std::isnan(v) ? v : std::min(std::max(v, lo), hi);
  };
  switch (a.kind) {
    case UnaryKind::kSqrt:
      return std::sqrt(x);
    case UnaryKind::kErf:
      return std::erf(x);
    case UnaryKind::kTanh:
      return std::tanh(x);
    case UnaryKind::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case UnaryKind::kAbs:
      return std::fabs(x);
    case UnaryKind::kNeg:
      return -x;
    case UnaryKind::kLog:
      return std::log(x);
    case UnaryKind::kReciprocal:
      return 1.0 / x;
    case UnaryKind::kFloor:
      return std::floor(x);
    case UnaryKind::kCeil:
      return std::ceil(x);
    case UnaryKind::kLeakyRelu:
      return x < 0 ? alpha * x : x;
    case UnaryKind::kElu:
      return x < 0 ? alpha * std::expm1(x) : x;  // e^x - 1 without cancellation near 0
    case UnaryKind::kHardSigmoid:
      return clamp(alpha * x + beta, 0.0, 1.0);
    case UnaryKind::kHardSwish:
      return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case UnaryKind::kSoftplus:
      return x > 700 ? x : std::log(1.0 + std::exp(x));  // exact in double up to e^700
    case UnaryKind::kSilu:
      return x / (1.0 + std::exp(-x));
    case UnaryKind::kClip:
      return clamp(x, alpha, beta);
    case UnaryKind::kSin:
      return std::sin(x);
    case UnaryKind::kCos:
      return std::cos(x);
    case UnaryKind::kRound:
      return round_half_even(x);
    case UnaryKind::kSign:
      return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : NAN;
    case UnaryKind::kMish:
      return x > 700 ? x : x * std::tanh(std::log1p(std::exp(x)));  // tanh(x) = 1 in double beyond 20
    case UnaryKind::kSelu:
      return x > 0 ? beta * x : beta * alpha * std::expm1(x);
    case UnaryKind::kCelu:
      return std::isnan(x) ? x : std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));  // ONNX
    case UnaryKind::kThresholdedRelu:
      return std::isnan(x) ? x : x > alpha ? x : 0.0;
    case UnaryKind::kSoftsign:
      return x / (1 + std::fabs(x));
    case UnaryKind::kShrink:
      return x < -alpha ? x + beta : x > alpha ? x - beta : 0.0;
    case UnaryKind::kTan:
      return std::tan(x);
    case UnaryKind::kAsin:
      return std::asin(x);
    case UnaryKind::kAcos:
      return std::acos(x);
    case UnaryKind::kAtan:
      return std::atan(x);
    case UnaryKind::kSinh:
      return std::sinh(x);
    case UnaryKind::kCosh:
      return std::cosh(x);
    case UnaryKind::kAsinh:
      return std::asinh(x);
    case UnaryKind::kAcosh:
      return std::acosh(x);
    case UnaryKind::kAtanh:
      return std::atanh(x);
  }
  return NAN;
}

// float32 against the double formula: a few float ulps (one is at most 1.2e-7 relative) of the result, and
// where an affine term cancels (x/6 + 1/2 near x = -3, alpha·x + beta) a few ulps of that term's size,
// `cancel_scale`. Results below float's normal range (e^-100) count as 0, results past float's largest
// (sinh 90) as infinite.
bool close(float got, double want, double cancel_scale = 0) {
  if (std::isnan(want)) return std::isnan(got);
  constexpr double kFloatOverflow = 3.4028235677973366e38;  // FLT_MAX + half an ulp: rounds to inf
  if (std::fabs(want) >= kFloatOverflow) return got == static_cast<float>(std::copysign(kInf, want));
  const double tol = 6e-7 * std::fabs(want) + 3e-7 * cancel_scale + 1e-37;
  return std::fabs(static_cast<double>(got) - want) <= tol;
}

std::vector<UnaryAttrs> every_kind() {
  std::vector<UnaryAttrs> v;
  for (int k = 0; k < kNumUnaryKinds; ++k) {
    UnaryAttrs a{static_cast<UnaryKind>(k), 0.0f, 0.0f};
    if (a.kind == UnaryKind::kLeakyRelu) a.alpha = 0.1f;
    if (a.kind == UnaryKind::kElu) a.alpha = 1.5f;
    if (a.kind == UnaryKind::kHardSigmoid) a = {a.kind, 0.2f, 0.5f};
    if (a.kind == UnaryKind::kClip) a = {a.kind, -1.25f, 2.5f};
    if (a.kind == UnaryKind::kSelu) a = {a.kind, 1.67326319217681884765625f, 1.05070102214813232421875f};
    if (a.kind == UnaryKind::kCelu) a.alpha = 1.5f;
    if (a.kind == UnaryKind::kThresholdedRelu) a.alpha = 1.0f;  // x = 1 itself gives 0
    if (a.kind == UnaryKind::kShrink) a = {a.kind, 0.5f, 0.25f};
    v.push_back(a);
  }
  // Clip with one open side, and with its bounds crossed (every value becomes the upper one, as torch.clamp).
  v.push_back({UnaryKind::kClip, -static_cast<float>(kInf), 0.75f});
  v.push_back({UnaryKind::kClip, 2.0f, 1.0f});
  // Celu with alpha below 1 (x/alpha grows), ThresholdedRelu below 0, Shrink as torch's hardshrink (bias 0)
  // and with a zero lambd.
  v.push_back({UnaryKind::kCelu, 0.25f, 0.0f});
  v.push_back({UnaryKind::kThresholdedRelu, -2.5f, 0.0f});
  v.push_back({UnaryKind::kShrink, 3.0f, 0.0f});
  v.push_back({UnaryKind::kShrink, 0.0f, 1.0f});
  return v;
}

}  // namespace

TEST_CASE("Unary: every kind on ref matches its formula in double, also in place") {
  auto backend = create_reference_backend();
  const HostTensor x = sweep();
  for (const UnaryAttrs& a : every_kind()) {
    const std::string kind = unary_kind_name(a.kind);
    CAPTURE(kind);
    CAPTURE(a.alpha);
    CAPTURE(a.beta);
    OpRunner r;
    REQUIRE(r.plan(*backend, OpType::kUnary, a, {&x}, {false}, "u").ok());
    CHECK(r.info().may_inplace);
    HostTensor out, in_place;
    REQUIRE(r.run({&x}, &out).ok());
    REQUIRE(r.run({&x}, &in_place, nullptr, /*inplace=*/true).ok());
    REQUIRE(out.shape == x.shape);
    int bad = 0;
    for (size_t i = 0; i < x.data.size(); ++i) {
      const double want = formula(a, x.data[i]);
      const bool affine = a.kind == UnaryKind::kHardSwish || a.kind == UnaryKind::kHardSigmoid ||
                          a.kind == UnaryKind::kShrink;
      const double cancel_scale = affine && std::isfinite(x.data[i]) ? std::fabs(x.data[i]) + 1 : 0;
      if (!close(out.data[i], want, cancel_scale) && ++bad <= 3)
        FAIL_CHECK("x = ", x.data[i], ": got ", out.data[i], ", expected ", want);
      CHECK((std::isnan(in_place.data[i]) ? std::isnan(out.data[i]) : in_place.data[i] == out.data[i]));
    }
    CHECK(bad == 0);
  }
}

// Round on ties (halves go to the even neighbour, both signs, up to float's last fractional bit) and Sign on
// zeros, exactly, signs of zero included (ONNX: numpy.round and numpy.sign; -0.5 rounds to -0, sign(-0) is
// +0).
TEST_CASE("Unary: Round sends halves to even and Sign gives +0 for both zeros, exactly") {
  auto backend = create_reference_backend();
  HostTensor x;
  x.shape = Shape{3, 5};
  x.data = {0.5f, 1.5f,  2.5f,   -0.5f,      -1.5f,       -2.5f,       0.49999997f, -0.49999997f,
            3.5f, -4.5f, 1e-30f, 8388607.5f, -8388606.5f, 16777215.0f, -0.0f};
  const double want_round[] = {0, 2, 2, -0.0, -2, -2, 0, -0.0, 4, -4, 0, 8388608, -8388606, 16777215, -0.0};
  OpRunner r;
  REQUIRE(r.plan(*backend, OpType::kUnary, UnaryAttrs{UnaryKind::kRound, 0, 0}, {&x}, {false}, "round").ok());
  HostTensor out;
  REQUIRE(r.run({&x}, &out).ok());
  for (size_t i = 0; i < x.data.size(); ++i) {
    CAPTURE(x.data[i]);
    CHECK(out.data[i] == want_round[i]);
    CHECK(std::signbit(out.data[i]) == std::signbit(want_round[i]));
    CHECK(out.data[i] == round_half_even(x.data[i]));
  }
  HostTensor z;
  z.shape = Shape{2};
  z.data = {0.0f, -0.0f};
  OpRunner s;
  REQUIRE(s.plan(*backend, OpType::kUnary, UnaryAttrs{UnaryKind::kSign, 0, 0}, {&z}, {false}, "sign").ok());
  REQUIRE(s.run({&z}, &out).ok());
  for (float v : out.data) CHECK((v == 0.0f && !std::signbit(v)));
}

// The cpu backend's Unary (backends/cpu/x86/unary.cpp) against the reference kernel: the same values, except
// Sigmoid and Silu, which use a vector exp there: within 1e-6 relative (or 1e-35 absolute, where e^-x
// overflows), with the same NaN and infinities (tests/x86/unary_x86_test.cpp checks more shapes and ISAs).
TEST_CASE("Unary: the cpu backend gives the reference kernel's values") {
  const std::unique_ptr<Backend> cpu = create_x86_backend();
  if (!cpu) return;  // no AVX2 here: nothing else to compare
  auto ref = create_reference_backend();
  const HostTensor x = sweep();
  for (const UnaryAttrs& a : every_kind()) {
    const std::string kind = unary_kind_name(a.kind);
    CAPTURE(kind);
    OpRunner rr, rc;
    REQUIRE(rr.plan(*ref, OpType::kUnary, a, {&x}, {false}, "u").ok());
    REQUIRE(rc.plan(*cpu, OpType::kUnary, a, {&x}, {false}, "u").ok());
    HostTensor want, got;
    REQUIRE(rr.run({&x}, &want).ok());
    REQUIRE(rc.run({&x}, &got).ok());
    const bool vector_exp = a.kind == UnaryKind::kSigmoid || a.kind == UnaryKind::kSilu;
    for (size_t i = 0; i < x.data.size(); ++i) {
      const float w = want.data[i], g = got.data[i];
      if (std::isnan(w))
        CHECK(std::isnan(g));
      else if (vector_exp && std::isfinite(w))
        CHECK(std::fabs(static_cast<double>(g) - w) <= 1e-6 * std::fabs(w) + 1e-35);
      else
        CHECK(g == w);
    }
  }
}

// Shape inference refuses them (every path into a session runs it); formats/op_options.cpp refuses them in a
// file first (tests/unit/unary_options_test.cpp).
TEST_CASE("Unary: malformed attributes are refused, saying what is wrong") {
  auto backend = create_reference_backend();
  const HostTensor x = sweep();
  struct Bad {
    UnaryAttrs attrs;
    const char* needle;
  };
  const Bad cases[] = {
      {{static_cast<UnaryKind>(36), 0.0f, 0.0f}, "kind 36 is unknown"},
      {{static_cast<UnaryKind>(-1), 0.0f, 0.0f}, "kind -1 is unknown"},
      {{UnaryKind::kLeakyRelu, kNaN, 0.0f}, "LeakyRelu's alpha"},
      {{UnaryKind::kElu, static_cast<float>(kInf), 0.0f}, "Elu's alpha"},
      {{UnaryKind::kHardSigmoid, 0.2f, kNaN}, "HardSigmoid's beta"},
      {{UnaryKind::kClip, kNaN, 1.0f}, "Clip's bound is NaN"},
      {{UnaryKind::kSqrt, 1.0f, 0.0f}, "Sqrt's alpha 1.000000 must be 0"},
      {{UnaryKind::kLeakyRelu, 0.1f, 2.0f}, "LeakyRelu's beta 2.000000 must be 0"},
      {{UnaryKind::kRound, 0.5f, 0.0f}, "Round's alpha 0.500000 must be 0"},
      {{UnaryKind::kMish, 0.0f, kNaN}, "Mish's beta"},
      {{UnaryKind::kSin, static_cast<float>(kInf), 0.0f}, "Sin's alpha"},
      {{UnaryKind::kSelu, 1.5f, kNaN}, "Selu's beta"},
      {{UnaryKind::kCelu, 0.0f, 0.0f}, "Celu's alpha must not be 0"},
      {{UnaryKind::kCelu, 1.0f, 1.0f}, "Celu's beta 1.000000 must be 0"},
      {{UnaryKind::kThresholdedRelu, -static_cast<float>(kInf), 0.0f}, "ThresholdedRelu's alpha"},
      {{UnaryKind::kShrink, 0.5f, static_cast<float>(kInf)}, "Shrink's beta"},
      {{UnaryKind::kSoftsign, 0.5f, 0.0f}, "Softsign's alpha 0.500000 must be 0"},
      {{UnaryKind::kAtanh, 0.0f, 1.0f}, "Atanh's beta 1.000000 must be 0"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.needle);
    OpRunner r;
    const Status st = r.plan(*backend, OpType::kUnary, b.attrs, {&x}, {false}, "act");
    CHECK(st.code() == StatusCode::kBadModel);
    CHECK_MESSAGE(st.message().find(b.needle) != std::string::npos, st.message());
  }
}

TEST_CASE("Pow, Min, Max, Fmod, Mod, PRelu broadcast as numpy does and match their formulas, NaN included") {
  auto backend = create_reference_backend();
  HostTensor a, b;
  a.shape = Shape{3, 1, 5};
  b.shape = Shape{7, 1};
  for (int i = 0; i < 15; ++i) a.data.push_back(0.37f * static_cast<float>(i) - 2.1f);
  for (int i = 0; i < 7; ++i) b.data.push_back(0.5f * static_cast<float>(i) - 1.5f);
  a.data[3] = kNaN;
  a.data[0] = 0.0f;
  b.data[2] = kNaN;
  struct Op {
    OpType type;
    std::function<double(double, double)> f;
  };
  const Op ops[] = {
      {OpType::kPow, [](double p, double q) { return std::pow(p, q); }},
      {OpType::kMin,
       [](double p, double q) { return std::isnan(p) || std::isnan(q) ? NAN : std::min(p, q); }},
      {OpType::kMax,
       [](double p, double q) { return std::isnan(p) || std::isnan(q) ? NAN : std::max(p, q); }},
      {OpType::kFmod, [](double p, double q) { return std::fmod(p, q); }},  // exact in double
      {OpType::kMod, python_mod},
      {OpType::kPRelu, [](double x, double slope) { return x < 0 ? x * slope : x; }},  // x·slope exact
  };
  for (const Op& op : ops) {
    CAPTURE(op_type_name(op.type));
    for (bool swapped : {false, true}) {
      CAPTURE(swapped);
      const HostTensor& p = swapped ? b : a;
      const HostTensor& q = swapped ? a : b;
      OpRunner r;
      REQUIRE(r.plan(*backend, op.type, NoAttrs{}, {&p, &q}, {false, false}, "bin").ok());
      HostTensor out;
      REQUIRE(r.run({&p, &q}, &out).ok());
      REQUIRE(out.shape == Shape({3, 7, 5}));
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 7; ++j)
          for (int64_t k = 0; k < 5; ++k) {
            const double va = a.data[i * 5 + k], vb = b.data[j];
            const double want = swapped ? op.f(vb, va) : op.f(va, vb);
            const float got = out.data[(i * 7 + j) * 5 + k];
            CHECK_MESSAGE(close(got, want), va, ", ", vb, ": got ", got, ", expected ", want);
          }
    }
  }
}

}  // namespace test
}  // namespace vitrt

namespace vitrt {
namespace test {

// ONNX Mod's two float rules on the values where they differ, exactly, zero signs included (expected values
// printed by numpy.mod and numpy.fmod on float32).
TEST_CASE("Fmod keeps the dividend's sign, Mod takes the divisor's (numpy.fmod and numpy.mod), exactly") {
  auto backend = create_reference_backend();
  const float inf = INFINITY;
  HostTensor a, b;
  a.shape = b.shape = Shape{3, 5};
  a.data = {5, -5, 5, -5, 0, -0.0f, 5.5f, inf, 3, kNaN, 3, -0.0f, 0, -6, 6};
  b.data = {3, 3, -3, -3, 2, 2, inf, 2, 0, 2, -inf, 2, -2, 3, -3};
  const float want_mod[] = {2, 1, -1, -2, 0, 0, 5.5f, kNaN, kNaN, kNaN, -inf, 0, -0.0f, 0, -0.0f};
  const float want_fmod[] = {2, -2, 2, -2, 0, -0.0f, 5.5f, kNaN, kNaN, kNaN, 3, -0.0f, 0, -0.0f, 0};
  for (OpType type : {OpType::kMod, OpType::kFmod}) {
    CAPTURE(op_type_name(type));
    const float* want = type == OpType::kMod ? want_mod : want_fmod;
    OpRunner r;
    REQUIRE(r.plan(*backend, type, NoAttrs{}, {&a, &b}, {false, false}, "rem").ok());
    HostTensor out;
    REQUIRE(r.run({&a, &b}, &out).ok());
    for (size_t i = 0; i < a.data.size(); ++i) {
      CAPTURE(a.data[i]);
      CAPTURE(b.data[i]);
      if (std::isnan(want[i])) {
        CHECK(std::isnan(out.data[i]));
      } else {
        CHECK(out.data[i] == want[i]);
        CHECK(std::signbit(out.data[i]) == std::signbit(want[i]));
      }
    }
  }
}

}  // namespace test
}  // namespace vitrt

namespace vitrt {
namespace test {

// PRelu as ONNX's reference writes it (numpy.where(x < 0, x·slope, x)): a per-channel slope [C,1,1] over
// [B,C,H,W] as torch.nn.PReLU exports it; zeros of both signs pass through whatever the slope (torch's
// x > 0 ? x : slope·x would give NaN for 0 with an infinite slope), NaN stays NaN; bit for bit on both
// backends, in place too.
TEST_CASE("PRelu: the slope per channel, zeros and NaN as ONNX's reference, on ref and cpu") {
  HostTensor x, slope;
  x.shape = Shape{2, 3, 5, 7};  // planes of 35: the cpu backend's vector loop and its tail
  for (int64_t i = 0; i < x.shape.numel(); ++i) x.data.push_back(0.31f * static_cast<float>(i % 23) - 3.4f);
  x.data[4] = 0.0f;
  x.data[5] = -0.0f;
  x.data[19] = kNaN;
  x.data[40] = -INFINITY;
  slope.shape = Shape{3, 1, 1};
  slope.data = {0.25f, -1.5f, INFINITY};
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(create_reference_backend());
  if (auto cpu = create_x86_backend()) backends.push_back(std::move(cpu));
  for (const auto& backend : backends) {
    CAPTURE(backend->name());
    OpRunner r;
    REQUIRE(r.plan(*backend, OpType::kPRelu, NoAttrs{}, {&x, &slope}, {false, true}, "prelu").ok());
    CHECK(r.info().may_inplace);
    HostTensor out, in_place;
    REQUIRE(r.run({&x, &slope}, &out).ok());
    REQUIRE(r.run({&x, &slope}, &in_place, nullptr, /*inplace=*/true).ok());
    REQUIRE(out.shape == x.shape);
    for (int64_t i = 0; i < x.shape.numel(); ++i) {
      const float v = x.data[i], s = slope.data[(i / 35) % 3];
      const float want = v < 0.0f ? v * s : v;
      CAPTURE(v);
      CAPTURE(s);
      if (std::isnan(want)) {
        CHECK(std::isnan(out.data[i]));
        CHECK(std::isnan(in_place.data[i]));
      } else {
        CHECK(out.data[i] == want);
        CHECK(std::signbit(out.data[i]) == std::signbit(want));
        CHECK(in_place.data[i] == want);
      }
    }
    CHECK(out.data[4] == 0.0f);
    CHECK(std::signbit(out.data[5]));                  // -0 passes through
    CHECK(out.data[40] == -INFINITY * slope.data[1]);  // channel 1: -inf · -1.5
  }
}

}  // namespace test
}  // namespace vitrt
