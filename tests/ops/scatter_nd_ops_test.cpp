// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ScatterND (backends/cpu/ref/scatter_nd.cpp; the cpu backend runs the same kernel) on ONNX's two documented
// examples written out by hand, every reduction with repeated index tuples against the scatter written here
// (in tuple order), NaN through max / min as numpy.maximum / minimum; index values a model file could hold
// that are not integers in range fail the run naming the op; shapes that do not fit are refused at plan time.
// Outputs are poisoned with NaN by the runner.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/x86/x86_backend.h"
#include "op_test_util.h"

namespace vitrt {
namespace test {
namespace {

HostTensor tensor(const Shape& s, std::vector<float> v) {
  HostTensor t;
  t.shape = s;
  t.data = std::move(v);
  return t;
}

std::vector<std::unique_ptr<Backend>> backends() {
  std::vector<std::unique_ptr<Backend>> b;
  b.push_back(create_reference_backend());
  X86Options o;
  o.read_env = false;
  if (auto x86 = create_x86_backend(o)) b.push_back(std::move(x86));
  return b;
}

// Runs ScatterND on every backend with the indices constant and data, updates at run time.
std::vector<std::vector<float>> run_all(const HostTensor& data, const HostTensor& idx, const HostTensor& upd,
                                        ScatterReduction r, Status* status = nullptr) {
  std::vector<std::vector<float>> out;
  for (auto& b : backends()) {
    CAPTURE(b->name());
    OpRunner runner;
    const Status planned = runner.plan(*b, OpType::kScatterND, ScatterNDAttrs{r}, {&data, &idx, &upd},
                                       {false, true, false}, "scatter");
    REQUIRE_MESSAGE(planned.ok(), planned.message());
    HostTensor y;
    const Status st = runner.run({&data, &idx, &upd}, &y);
    if (status) {
      *status = st;
      if (!st.ok()) continue;
    }
    REQUIRE_MESSAGE(st.ok(), st.message());
    out.push_back(y.data);
  }
  return out;
}

}  // namespace

TEST_CASE("ScatterND: ONNX's documented examples on ref and cpu") {
  {  // Example 1: data [8], indices [[4], [3], [1], [7]], updates [9, 10, 11, 12].
    const HostTensor data = tensor(Shape{8}, {1, 2, 3, 4, 5, 6, 7, 8});
    const HostTensor idx = tensor(Shape{4, 1}, {4, 3, 1, 7});
    const HostTensor upd = tensor(Shape{4}, {9, 10, 11, 12});
    for (const auto& y : run_all(data, idx, upd, ScatterReduction::kNone))
      CHECK(y == std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12});
  }
  {  // Example 2: data [4, 4, 4], indices [[0], [2]], updates [2, 4, 4]: two whole matrices replaced.
    std::vector<float> d = {1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6,
                            7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4,
                            5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<float> u = {5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8,
                            1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4};
    std::vector<float> want = d;
    std::copy(u.begin(), u.begin() + 16, want.begin());
    std::copy(u.begin() + 16, u.end(), want.begin() + 32);
    for (const auto& y : run_all(tensor(Shape{4, 4, 4}, d), tensor(Shape{2, 1}, {0, 2}),
                                 tensor(Shape{2, 4, 4}, u), ScatterReduction::kNone))
      CHECK(y == want);
  }
}

TEST_CASE("ScatterND: every reduction with repeated tuples, in tuple order; max / min propagate NaN") {
  // data [3, 4, 5], tuples of k = 2 (rows of 5), the row (2, 1) three times and (0, 3) once.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> d(60), u(20);
  for (size_t e = 0; e < d.size(); ++e) d[e] = 0.25f * static_cast<float>(e) - 6.0f;
  for (size_t e = 0; e < u.size(); ++e) u[e] = 1.5f - 0.375f * static_cast<float>(e);
  d[2 * 20 + 1 * 5 + 3] = nan;  // max / min keep it
  u[1 * 5 + 4] = nan;           // and take it
  const std::vector<float> tuples = {2, 1, 0, 3, 2, 1, 2, 1};
  for (ScatterReduction r : {ScatterReduction::kNone, ScatterReduction::kAdd, ScatterReduction::kMul,
                             ScatterReduction::kMax, ScatterReduction::kMin}) {
    CAPTURE(static_cast<int>(r));
    std::vector<float> want = d;
    for (int t = 0; t < 4; ++t)
      for (int e = 0; e < 5; ++e) {
        float& w = want[static_cast<size_t>(tuples[2 * t] * 20 + tuples[2 * t + 1] * 5 + e)];
        const float v = u[t * 5 + e];
        if (r == ScatterReduction::kNone) w = v;
        if (r == ScatterReduction::kAdd) w = w + v;
        if (r == ScatterReduction::kMul) w = w * v;
        if (r == ScatterReduction::kMax) w = std::isnan(w) || std::isnan(v) ? nan : std::max(w, v);
        if (r == ScatterReduction::kMin) w = std::isnan(w) || std::isnan(v) ? nan : std::min(w, v);
      }
    for (const auto& y :
         run_all(tensor(Shape{3, 4, 5}, d), tensor(Shape{4, 2}, tuples), tensor(Shape{4, 5}, u), r)) {
      REQUIRE(y.size() == want.size());
      for (size_t e = 0; e < y.size(); ++e) {
        CAPTURE(e);
        CHECK((y[e] == want[e] || (std::isnan(y[e]) && std::isnan(want[e]))));
      }
    }
  }
}

TEST_CASE("ScatterND: an index that is not an integer in range fails the run naming the op") {
  const HostTensor data = tensor(Shape{3, 4}, std::vector<float>(12, 1.0f));
  const HostTensor upd = tensor(Shape{2, 4}, std::vector<float>(8, 2.0f));
  for (float bad : {3.0f, -1.0f, 0.5f, std::numeric_limits<float>::quiet_NaN(), 1e30f}) {
    CAPTURE(bad);
    Status st;
    const auto ys = run_all(data, tensor(Shape{2, 1}, {1.0f, bad}), upd, ScatterReduction::kNone, &st);
    CHECK(ys.empty());
    CHECK(st.code() == StatusCode::kRuntime);
    CHECK_MESSAGE(st.message().find("ScatterND 'scatter'") != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find("not an integer in [0, 3)") != std::string::npos, st.message());
  }
}

TEST_CASE("ScatterND: tuples longer than data's rank or updates of the wrong shape are refused at plan") {
  auto ref = create_reference_backend();
  const HostTensor data = tensor(Shape{3, 4}, std::vector<float>(12, 1.0f));
  struct Bad {
    HostTensor idx, upd;
    const char* what;
  };
  const Bad bad[] = {
      {tensor(Shape{1, 3}, {0, 0, 0}), tensor(Shape{1}, {1}), "must end in an axis from 1 to the rank"},
      {tensor(Shape{2, 1}, {0, 1}), tensor(Shape{2, 3}, std::vector<float>(6, 1)), "do not have the shape"},
      {tensor(Shape{2, 2}, {0, 1, 1, 0}), tensor(Shape{2, 1}, {1, 2}), "do not have the shape"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.what);
    OpRunner r;
    const Status st = r.plan(*ref, OpType::kScatterND, ScatterNDAttrs{}, {&data, &b.idx, &b.upd},
                             {false, true, false}, "scatter");
    CHECK_FALSE(st.ok());
    CHECK_MESSAGE(st.message().find(b.what) != std::string::npos, st.message());
  }
}

}  // namespace test
}  // namespace vitrt
