// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// GatherElements on the x86 backend (backends/cpu/x86/gather_elements.cpp) against the reference kernel,
// exactly: random odd shapes, every axis, indices smaller than the data on the other axes, every ISA, 1 and 2
// threads; ONNX's documented examples by hand on both; an index that is out of range or not an integer (a
// model file is not trusted) fails the run on both, naming the op.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {

TEST_CASE(
    "x86 GatherElements matches the reference exactly on random shapes and axes (every ISA, 1-2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(4545);
  const int64_t sizes[] = {1, 2, 3, 5, 8, 17, 40, 129};
  int checked = 0;
  for (int trial = 0; trial < 100; ++trial) {
    Shape s, is;
    s.rank = is.rank = 1 + static_cast<int>(rng() % 4);
    int64_t n = 1;
    for (int d = 0; d < s.rank; ++d) {
      s.dims[d] = sizes[rng() % 8];
      if (n * s.dims[d] > 200000) s.dims[d] = 1 + static_cast<int64_t>(rng() % 3);
      n *= s.dims[d];
    }
    GatherElementsAttrs a;
    const int ax = static_cast<int>(rng() % s.rank);
    a.axis = ax - (rng() % 2 ? s.rank : 0);
    for (int d = 0; d < s.rank; ++d)  // the gathered axis any length; the others no larger than data's
      is.dims[d] =
          d == ax ? 1 + static_cast<int64_t>(rng() % 9) : 1 + static_cast<int64_t>(rng() % s.dims[d]);
    HostTensor x = random_tensor(s, rng);
    HostTensor idx;
    idx.shape = is;
    for (int64_t e = 0; e < is.numel(); ++e) idx.data.push_back(static_cast<float>(rng() % s.dims[ax]));
    INFO(s.str(), " indices ", is.str(), " axis ", a.axis);
    const std::vector<const HostTensor*> in{&x, &idx};
    ThreadedOpRunner rr;
    Status st = rr.plan(*ref, OpType::kGatherElements, a, in, {false, true}, 1);
    REQUIRE_MESSAGE(st.ok(), st.message());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        ThreadedOpRunner r;
        st = r.plan(*x86, OpType::kGatherElements, a, in, {false, true}, threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        HostTensor got;
        REQUIRE(r.run(in, &got).ok());  // the runner poisons the output with NaN first
        CHECK(got.shape == want.shape);
        CHECK(got.data == want.data);
      }
    }
    ++checked;
  }
  MESSAGE("checked ", checked, " random GatherElements cases");
}

TEST_CASE("GatherElements: ONNX's examples by hand, and a bad index refused at run time naming the op") {
  struct Case {
    Shape data_shape;
    std::vector<float> data;
    Shape idx_shape;
    std::vector<float> idx;
    int32_t axis;
    std::vector<float> want;  // empty: the run must fail
  };
  const Case cases[] = {
      {Shape{2, 2}, {1, 2, 3, 4}, Shape{2, 2}, {0, 0, 1, 0}, 1, {1, 1, 4, 3}},
      {Shape{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{2, 3}, {1, 2, 0, 2, 0, 0}, 0, {4, 8, 3, 7, 2, 3}},
      {Shape{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{2, 3}, {1, 2, 0, 2, 0, 0}, -2, {4, 8, 3, 7, 2, 3}},
      {Shape{2, 2}, {1, 2, 3, 4}, Shape{2, 2}, {0, 2, 1, 0}, 1, {}},
      {Shape{2, 2}, {1, 2, 3, 4}, Shape{2, 2}, {0, 0.5f, 1, 0}, 1, {}},
      {Shape{2, 2}, {1, 2, 3, 4}, Shape{2, 2}, {0, -1, 1, 0}, 1, {}},
  };
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(create_reference_backend());
  for (X86Isa isa : isa_levels()) backends.push_back(make_x86(isa));
  for (const Case& c : cases) {
    HostTensor x, idx;
    x.shape = c.data_shape;
    x.data = c.data;
    idx.shape = c.idx_shape;
    idx.data = c.idx;
    for (auto& be : backends) {
      CAPTURE(be->name());
      CAPTURE(c.axis);
      ThreadedOpRunner r;
      const std::vector<const HostTensor*> in{&x, &idx};
      REQUIRE(r.plan(*be, OpType::kGatherElements, GatherElementsAttrs{c.axis}, in, {false, true}, 2).ok());
      HostTensor got;
      const Status st = r.run(in, &got);
      if (c.want.empty()) {
        CHECK_FALSE(st.ok());
        CHECK_MESSAGE(st.message().find("GatherElements") != std::string::npos, st.message());
        CHECK_MESSAGE(st.message().find("index") != std::string::npos, st.message());
      } else {
        REQUIRE_MESSAGE(st.ok(), st.message());
        CHECK(got.data == c.want);
      }
    }
  }
}

}  // namespace test
}  // namespace vitrt
