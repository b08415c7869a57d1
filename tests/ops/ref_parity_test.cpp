// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The reference backend against PyTorch, op by op (cases from tools/reference/make_op_cases.py).
#include <doctest/doctest.h>

#include "op_cases.h"

namespace vitrt {
namespace test {
namespace {

const std::vector<OpCase>& all_cases() {
  static std::vector<OpCase> cases;
  static bool loaded = false;
  if (!loaded) {
    loaded = true;
    const std::string dir = op_cases_dir();
    REQUIRE_MESSAGE(!dir.empty(), "VITRT_FIXTURE_DIR is not set");
    Status s = load_op_cases(dir, &cases);
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(!cases.empty());
  }
  return cases;
}

// The first batch item of a batched tensor.
HostTensor first_item(const HostTensor& t) {
  HostTensor r;
  r.shape = t.shape;
  r.shape[0] = 1;
  r.data.assign(t.data.begin(), t.data.begin() + r.shape.numel());
  return r;
}

TEST_CASE("ref backend matches PyTorch on every op case") {
  auto backend = create_reference_backend();
  int checked = 0, inplace = 0;
  for (const OpCase& c : all_cases()) {
    INFO("case ", c.name);
    OpRunner r;
    Status s = r.plan(*backend, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), c.name);
    REQUIRE_MESSAGE(s.ok(), c.name, ": plan: ", s.message());
    CHECK_MESSAGE(r.planned_output_shape() == c.out_shape, c.name, ": planned ",
                  r.planned_output_shape().str(), " vs torch ", c.out_shape.str());
    HostTensor out;
    s = r.run(c.input_ptrs(), &out);
    REQUIRE_MESSAGE(s.ok(), c.name, ": run: ", s.message());
    Comparison cmp = compare_to_reference(out.data, c.expected64, c.expected32);
    CHECK_MESSAGE(cmp.ok, c.name, ": ", cmp.message);
    if (std::getenv("VITRT_OPS_VERBOSE")) MESSAGE(c.name, ": ", cmp.message);
    ++checked;

    // Reshape is a plain copy of the same bytes: in place it is no copy at all.
    const bool unary = c.type == OpType::kGelu || c.type == OpType::kRelu || c.type == OpType::kReshape ||
                       c.type == OpType::kExp || c.type == OpType::kSqueezeExcite;
    const bool binary_same = (c.type == OpType::kAdd || c.type == OpType::kMul || c.type == OpType::kSub ||
                              c.type == OpType::kDiv || c.type == OpType::kCompare) &&
                             c.inputs[0].tensor.shape == c.out_shape;
    CHECK_MESSAGE(r.info().may_inplace == (unary || binary_same), c.name, ": may_inplace");
    if (r.info().may_inplace) {
      HostTensor out2;
      s = r.run(c.input_ptrs(), &out2, nullptr, /*inplace=*/true);
      REQUIRE_MESSAGE(s.ok(), c.name, ": in-place run: ", s.message());
      CHECK_MESSAGE(out2.data == out.data, c.name, ": in-place result differs");
      ++inplace;
    }
  }
  MESSAGE("checked ", checked, " op cases (", inplace, " also in place)");
}

TEST_CASE("ref backend runs a smaller batch than planned") {
  auto backend = create_reference_backend();
  int checked = 0;
  for (const OpCase& c : all_cases()) {
    if (!c.batchable) continue;
    INFO("case ", c.name);
    OpRunner r;
    Status s = r.plan(*backend, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), c.name);
    REQUIRE_MESSAGE(s.ok(), c.name, ": plan: ", s.message());
    std::vector<HostTensor> small(c.inputs.size());
    std::vector<const HostTensor*> ptrs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.inputs[i].present) {
        ptrs.push_back(nullptr);
        continue;
      }
      small[i] = c.inputs[i].batched ? first_item(c.inputs[i].tensor) : c.inputs[i].tensor;
      ptrs.push_back(&small[i]);
    }
    HostTensor out;
    s = r.run(ptrs, &out);
    REQUIRE_MESSAGE(s.ok(), c.name, ": batch-1 run: ", s.message());
    Shape want = c.out_shape;
    want[0] = 1;
    CHECK_MESSAGE(out.shape == want, c.name, ": batch-1 output ", out.shape.str());
    const size_t n = static_cast<size_t>(want.numel());
    std::vector<double> e64(c.expected64.begin(), c.expected64.begin() + n);
    std::vector<double> e32(c.expected32.begin(), c.expected32.begin() + n);
    Comparison cmp = compare_to_reference(out.data, e64, e32);
    CHECK_MESSAGE(cmp.ok, c.name, " (batch 1): ", cmp.message);
    ++checked;
  }
  CHECK(checked > 50);
  MESSAGE("checked ", checked, " op cases at batch 1");
}

TEST_CASE("ref backend rejects an output shape that does not match the inputs") {
  auto backend = create_reference_backend();
  for (const OpCase& c : all_cases()) {
    INFO("case ", c.name);
    OpRunner r;
    REQUIRE(r.plan(*backend, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), c.name).ok());
    Shape bad = c.out_shape;
    if (bad.rank == 0)
      bad = Shape{2};  // a 0-d output (sum_all, max_all): a 1-d shape instead
    else
      bad.dims[bad.rank - 1] += 1;
    Status s = r.run(c.input_ptrs(), nullptr, &bad);
    CHECK_MESSAGE(!s.ok(), c.name, ": a wrong output shape was accepted");
    if (!s.ok()) {
      CHECK(s.code() == StatusCode::kRuntime);
      CHECK_MESSAGE(s.message().find(c.name) != std::string::npos, s.message());
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace vitrt
