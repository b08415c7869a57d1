// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Reduce (every ReduceKind), LogSoftmax and InstanceNorm on the reference backend against their formulas in
// double on the same float inputs, where PyTorch's op cases (tools/reference/make_op_cases.py) do not reach:
// NaN and infinities, empty reductions (ONNX's identities), rows that a float32 exp would over- or underflow,
// a constant plane; the cpu backend's values equal the reference's; malformed nodes are refused naming the
// op.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "backends/cpu/x86/x86_backend.h"
#include "op_test_util.h"

namespace vitrt {
namespace test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// [3,5,4]: reduced over axis 1, column (i, j) holds 5 values. Column 0 of each row is ordinary; the others
// hold a NaN, +inf, -inf, all -inf, values near ±100 or zeros, so every kind meets each special case.
HostTensor specials() {
  HostTensor t;
  t.shape = Shape{3, 5, 4};
  t.data.resize(60);
  for (int i = 0; i < 60; ++i) t.data[i] = 0.3f * static_cast<float>((i * 7) % 11) - 1.4f;
  auto col = [&](int i, int j, std::vector<float> v) {
    for (int k = 0; k < 5; ++k) t.data[(i * 5 + k) * 4 + j] = v[k];
  };
  col(0, 1, {1.0f, kNaN, -2.0f, 3.0f, 0.5f});
  col(0, 2, {1.0f, INFINITY, -2.0f, 3.0f, 0.5f});
  col(0, 3, {1.0f, -INFINITY, -2.0f, 3.0f, 0.5f});
  col(1, 1, {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY});
  col(1, 2, {100.0f, 99.0f, 101.5f, 98.0f, 100.25f});
  col(1, 3, {-100.0f, -99.0f, -101.5f, -98.0f, -100.25f});
  col(2, 1, {0.0f, 0.0f, 0.0f, 0.0f, 0.0f});
  col(2, 2, {2.0f, 0.5f, 1.5f, 0.25f, 3.0f});
  col(2, 3, {INFINITY, 1.0f, kNaN, 2.0f, 1.0f});
  return t;
}

// The reduction of `v` in double as ONNX defines it (core/ir/op_attrs.h, ReduceKind).
double formula(ReduceKind kind, const std::vector<double>& v) {
  double r = kind == ReduceKind::kProd ? 1.0 : kind == ReduceKind::kMin ? kInf : 0.0;
  for (double x : v) {
    if (std::isnan(x) && kind == ReduceKind::kMin) return x;
    switch (kind) {
      case ReduceKind::kMin:
        r = std::min(r, x);
        break;
      case ReduceKind::kProd:
        r *= x;
        break;
      case ReduceKind::kL1:
        r += std::fabs(x);
        break;
      case ReduceKind::kL2:
      case ReduceKind::kSumSquare:
        r += x * x;
        break;
      case ReduceKind::kLogSum:
        r += x;
        break;
      case ReduceKind::kLogSumExp:
        r += std::exp(x);  // exact enough in double for |x| <= 700
        break;
    }
  }
  if (kind == ReduceKind::kL2) return std::sqrt(r);
  if (kind == ReduceKind::kLogSum || kind == ReduceKind::kLogSumExp) return std::log(r);
  return r;
}

bool close(float got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == static_cast<float>(want);
  return std::fabs(static_cast<double>(got) - want) <= 4e-7 * std::fabs(want) + 1e-30;
}

HostTensor run_op(Backend& backend, OpType type, const OpAttrs& attrs,
                  const std::vector<const HostTensor*>& in, const std::vector<bool>& constant) {
  OpRunner r;
  const Status st = r.plan(backend, type, attrs, in, constant, "op");
  REQUIRE_MESSAGE(st.ok(), st.message());
  HostTensor out;
  const Status rs = r.run(in, &out);
  REQUIRE_MESSAGE(rs.ok(), rs.message());
  return out;
}

}  // namespace

TEST_CASE("Reduce: every kind over NaN, infinities, all -inf and ±100 matches its formula in double") {
  auto backend = create_reference_backend();
  const HostTensor x = specials();
  for (int k = 0; k < kNumReduceKinds; ++k) {
    const auto kind = static_cast<ReduceKind>(k);
    CAPTURE(k);
    for (bool keep : {false, true}) {
      const HostTensor y = run_op(*backend, OpType::kReduce, ReduceAttrs{kind, {-2}, keep}, {&x}, {false});
      CHECK(y.shape == (keep ? Shape{3, 1, 4} : Shape{3, 4}));
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) {
          std::vector<double> v;
          for (int r = 0; r < 5; ++r) v.push_back(x.data[(i * 5 + r) * 4 + j]);
          const double want = formula(kind, v);
          CAPTURE(i);
          CAPTURE(j);
          CHECK_MESSAGE(close(y.data[i * 4 + j], want), "got ", y.data[i * 4 + j], ", expected ", want);
        }
    }
  }
}

TEST_CASE("Reduce over an empty axis gives ONNX's identities; the kept axes still index the output") {
  auto backend = create_reference_backend();
  HostTensor x;
  x.shape = Shape{2, 0, 3};
  const double want[] = {kInf, 1.0, 0.0, 0.0, 0.0, -kInf, -kInf};  // in ReduceKind order
  for (int k = 0; k < kNumReduceKinds; ++k) {
    CAPTURE(k);
    const HostTensor y =
        run_op(*backend, OpType::kReduce, ReduceAttrs{static_cast<ReduceKind>(k), {1}, false}, {&x}, {false});
    REQUIRE(y.shape == Shape{2, 3});
    for (float v : y.data) CHECK(v == static_cast<float>(want[k]));
  }
}

TEST_CASE("Reduce over non-adjacent axes, the batch axis included, on ref and cpu") {
  auto ref = create_reference_backend();
  const std::unique_ptr<Backend> cpu = create_x86_backend();
  HostTensor x;
  x.shape = Shape{3, 4, 5, 2};
  for (int i = 0; i < 120; ++i) x.data.push_back(0.05f * static_cast<float>((i * 37) % 41) - 0.9f);
  for (int k = 0; k < kNumReduceKinds; ++k) {
    const auto kind = static_cast<ReduceKind>(k);
    CAPTURE(k);
    HostTensor in = x;
    if (kind == ReduceKind::kLogSum)
      for (float& v : in.data) v = std::fabs(v) + 0.1f;
    const ReduceAttrs a{kind, {0, -2}, true};
    const HostTensor y = run_op(*ref, OpType::kReduce, a, {&in}, {false});
    REQUIRE(y.shape == Shape{1, 4, 1, 2});
    for (int c = 0; c < 4; ++c)
      for (int e = 0; e < 2; ++e) {
        std::vector<double> v;
        for (int b = 0; b < 3; ++b)
          for (int h = 0; h < 5; ++h) v.push_back(in.data[((b * 4 + c) * 5 + h) * 2 + e]);
        CHECK(close(y.data[c * 2 + e], formula(kind, v)));
      }
    if (!cpu) continue;  // no AVX2 here
    const HostTensor z = run_op(*cpu, OpType::kReduce, a, {&in}, {false});
    CHECK(z.data == y.data);
  }
}

TEST_CASE("LogSoftmax: x - max - log(sum exp(x - max)) in double, where a float exp would overflow") {
  auto backend = create_reference_backend();
  const std::unique_ptr<Backend> cpu = create_x86_backend();
  HostTensor x;
  x.shape = Shape{4, 7};
  const float rows[4][7] = {{0.5f, -1.0f, 2.0f, 0.0f, 3.5f, -2.5f, 1.0f},
                            {1000.0f, 999.0f, 1001.5f, 990.0f, 1000.25f, 995.0f, 1002.0f},
                            {-1000.0f, -999.0f, -1001.5f, -990.0f, -1000.25f, -995.0f, -1002.0f},
                            {-INFINITY, 1.0f, 2.0f, -INFINITY, 0.0f, 3.0f, -1.0f}};
  for (const auto& r : rows) x.data.insert(x.data.end(), r, r + 7);
  for (Backend* b : {backend.get(), cpu.get()}) {
    if (!b) continue;
    for (int axis : {-1, 1}) {
      const HostTensor y = run_op(*b, OpType::kLogSoftmax, SoftmaxAttrs{axis}, {&x}, {false});
      REQUIRE(y.shape == x.shape);
      for (int r = 0; r < 4; ++r) {
        double mx = -kInf, sum = 0;
        for (int j = 0; j < 7; ++j) mx = std::max(mx, static_cast<double>(rows[r][j]));
        for (int j = 0; j < 7; ++j) sum += std::exp(rows[r][j] - mx);
        for (int j = 0; j < 7; ++j) {
          const double want = rows[r][j] - mx - std::log(sum);
          CAPTURE(r);
          CAPTURE(j);
          CHECK_MESSAGE(close(y.data[r * 7 + j], want), "got ", y.data[r * 7 + j], ", expected ", want);
        }
      }
    }
  }
}

TEST_CASE("InstanceNorm: biased variance per plane, a constant plane gives the bias, cpu = ref") {
  auto backend = create_reference_backend();
  const std::unique_ptr<Backend> cpu = create_x86_backend();
  HostTensor x, scale, bias;
  x.shape = Shape{2, 3, 5, 3};
  for (int i = 0; i < 90; ++i) x.data.push_back(0.7f * static_cast<float>((i * 11) % 17) + 100.0f);
  for (int i = 45; i < 60; ++i) x.data[i] = 4.25f;  // plane (1, 0) is constant
  scale.shape = bias.shape = Shape{3};
  scale.data = {1.5f, -0.5f, 2.0f};
  bias.data = {0.25f, -1.0f, 3.0f};
  const float eps = 1e-3f;
  HostTensor want_ref;
  for (Backend* b : {backend.get(), cpu.get()}) {
    if (!b) continue;
    const HostTensor y =
        run_op(*b, OpType::kInstanceNorm, InstanceNormAttrs{eps}, {&x, &scale, &bias}, {false, true, true});
    REQUIRE(y.shape == x.shape);
    for (int p = 0; p < 6; ++p) {
      const int c = p % 3;
      double mean = 0, var = 0;
      for (int i = 0; i < 15; ++i) mean += x.data[p * 15 + i];
      mean /= 15;
      for (int i = 0; i < 15; ++i) var += (x.data[p * 15 + i] - mean) * (x.data[p * 15 + i] - mean);
      var /= 15;
      for (int i = 0; i < 15; ++i) {
        const double want = scale.data[c] * (x.data[p * 15 + i] - mean) / std::sqrt(var + eps) + bias.data[c];
        CAPTURE(p);
        CHECK_MESSAGE(std::fabs(y.data[p * 15 + i] - want) <= 1e-6 * (std::fabs(want) + 1),
                      y.data[p * 15 + i], " vs ", want);
      }
    }
    for (int i = 45; i < 60; ++i) CHECK(y.data[i] == 0.25f);
    if (want_ref.data.empty())
      want_ref = y;
    else
      CHECK(y.data == want_ref.data);
  }
}

TEST_CASE("Reduce, LogSoftmax and InstanceNorm refuse malformed nodes, naming the op") {
  auto backend = create_reference_backend();
  HostTensor x, c3, c4;
  x.shape = Shape{2, 3, 4};
  x.data.assign(24, 1.0f);
  c3.shape = Shape{3};
  c3.data.assign(3, 1.0f);
  c4.shape = Shape{4};
  c4.data.assign(4, 1.0f);
  struct Bad {
    OpType type;
    OpAttrs attrs;
    std::vector<const HostTensor*> in;
    const char* needle;
  };
  const Bad cases[] = {
      {OpType::kReduce, ReduceAttrs{static_cast<ReduceKind>(7), {1}, false}, {&x}, "Reduce: unknown kind 7"},
      {OpType::kReduce, ReduceAttrs{ReduceKind::kMin, {}, false}, {&x}, "Reduce: no axes"},
      {OpType::kReduce, ReduceAttrs{ReduceKind::kL2, {1, -2}, false}, {&x}, "Reduce: bad axis -2"},
      {OpType::kReduce, ReduceAttrs{ReduceKind::kL2, {3}, false}, {&x}, "Reduce: bad axis 3"},
      {OpType::kLogSoftmax, SoftmaxAttrs{3}, {&x}, "LogSoftmax: axis out of range"},
      {OpType::kInstanceNorm, InstanceNormAttrs{kNaN}, {&x, &c3, &c3}, "InstanceNorm: epsilon"},
      {OpType::kInstanceNorm, InstanceNormAttrs{-1e-5f}, {&x, &c3, &c3}, "InstanceNorm: epsilon"},
      {OpType::kInstanceNorm, InstanceNormAttrs{}, {&x, &c4, &c3}, "InstanceNorm: scale must be [3]"},
      {OpType::kInstanceNorm, InstanceNormAttrs{}, {&x, &c3, &c4}, "InstanceNorm: bias must be [3]"},
      {OpType::kInstanceNorm, InstanceNormAttrs{}, {&c4, &c3, &c3}, "rank >= 3"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.needle);
    OpRunner r;
    const Status st = r.plan(*backend, b.type, b.attrs, b.in, std::vector<bool>(b.in.size(), false), "op");
    CHECK(st.code() == StatusCode::kBadModel);
    CHECK_MESSAGE(st.message().find(b.needle) != std::string::npos, st.message());
  }
}

}  // namespace test
}  // namespace vitrt
