// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Resize against PyTorch's F.interpolate float32 results bit for bit (the make_op_cases.py resize_* cases:
// nearest, linear 1-D/2-D/3-D, bicubic; align_corners both ways; up, down, odd sizes, non-integer scale
// factors). The taps, weights and fused multiply-adds follow PyTorch's CPU kernels (backends/cpu/ref/
// resize_taps.h), so every element must equal torch's float32 value exactly; ref_parity_test.cpp checks the
// same cases against torch's float64 result with the usual tolerance.
#include <doctest/doctest.h>

#include <cstring>

#include "op_cases.h"

namespace vitrt {
namespace test {
namespace {

TEST_CASE("Resize gives PyTorch's float32 bits on every resize op case (ref)") {
  const std::string dir = op_cases_dir();
  REQUIRE_MESSAGE(!dir.empty(), "VITRT_FIXTURE_DIR is not set");
  std::vector<OpCase> cases;
  Status s = load_op_cases(dir, &cases);
  REQUIRE_MESSAGE(s.ok(), s.message());
  auto backend = create_reference_backend();
  int checked = 0;
  for (const OpCase& c : cases) {
    if (c.type != OpType::kResize) continue;
    INFO("case ", c.name);
    OpRunner r;
    s = r.plan(*backend, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), c.name);
    REQUIRE_MESSAGE(s.ok(), s.message());
    HostTensor out;
    s = r.run(c.input_ptrs(), &out);
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(out.data.size() == c.expected32.size());
    size_t differ = 0, first = 0;
    for (size_t i = 0; i < out.data.size(); ++i) {
      const float want = static_cast<float>(c.expected32[i]);
      if (std::memcmp(&out.data[i], &want, sizeof want) != 0 && differ++ == 0) first = i;
    }
    CHECK_MESSAGE(differ == 0, c.name, ": ", differ, " of ", out.data.size(),
                  " elements differ from torch's float32, first ", first, ": ", out.data[first], " vs ",
                  c.expected32[first]);
    ++checked;
  }
  CHECK(checked >= 25);
  MESSAGE("checked ", checked, " Resize cases bit for bit");
}

}  // namespace
}  // namespace test
}  // namespace vitrt
