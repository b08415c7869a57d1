// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Resize on the x86 backend (one plane per task, rows blended once into the workspace) against the reference
// kernel's nested blend: random odd shapes, every mode, coordinate transformation and nearest rounding,
// cubic_a and exclude_outside, up and down, inputs with NaN and inf, every ISA, 1 and 2 threads. The two
// compute the same float expressions, so the results must be identical bit for bit (NaN where the reference
// has NaN); the outputs are poisoned with NaN before each run, so an unwritten element shows.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

// Random Resize attributes for the last two axes of [.., h, w]: steps as the importer derives them from the
// drawn output lengths (or from a drawn scale).
ResizeAttrs random_resize(std::mt19937& rng, int64_t h, int64_t w) {
  ResizeAttrs a;
  a.mode = static_cast<ResizeMode>(rng() % kNumResizeModes);
  a.coordinate = static_cast<ResizeCoordinate>(rng() % kNumResizeCoordinates);
  a.nearest = static_cast<ResizeNearest>(rng() % kNumResizeNearest);
  a.cubic_a = rng() % 2 ? -0.75f : -0.5f;
  a.exclude_outside = rng() % 3 == 0;
  for (int64_t n : {h, w}) {
    const int64_t out = 1 + static_cast<int64_t>(rng() % static_cast<unsigned>(3 * n + 2));
    a.sizes.push_back(out);
    a.scales.push_back(static_cast<double>(out) / static_cast<double>(n));
    a.steps.push_back(a.coordinate == ResizeCoordinate::kAlignCorners
                          ? (out > 1 ? static_cast<float>(n - 1) / static_cast<float>(out - 1) : 0.0f)
                          : static_cast<float>(n) / static_cast<float>(out));
  }
  return a;
}

std::string describe(const Shape& s, const ResizeAttrs& a) {
  return s.str() + " -> " + std::to_string(a.sizes[0]) + "x" + std::to_string(a.sizes[1]) + " mode " +
         std::to_string(static_cast<int>(a.mode)) + " coordinate " +
         std::to_string(static_cast<int>(a.coordinate)) + " nearest " +
         std::to_string(static_cast<int>(a.nearest)) + " a " + std::to_string(a.cubic_a) +
         (a.exclude_outside ? " exclude_outside" : "");
}

}  // namespace

TEST_CASE(
    "x86 Resize matches the reference bit for bit on random shapes and modes (every ISA, 1 and 2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(4343);
  int checked = 0, nan_inputs = 0;
  for (int trial = 0; trial < 90; ++trial) {
    const Shape s{1 + static_cast<int64_t>(rng() % 3), 1 + static_cast<int64_t>(rng() % 4),
                  1 + static_cast<int64_t>(rng() % 17), 1 + static_cast<int64_t>(rng() % 23)};
    const ResizeAttrs a = random_resize(rng, s[2], s[3]);
    HostTensor x = random_tensor(s, rng);
    if (trial % 4 == 0) {  // NaN and inf propagate through the same taps
      x.data[rng() % x.data.size()] = std::numeric_limits<float>::quiet_NaN();
      x.data[rng() % x.data.size()] = std::numeric_limits<float>::infinity();
      ++nan_inputs;
    }
    INFO(describe(s, a));
    const std::vector<const HostTensor*> in{&x};
    ThreadedOpRunner rr;
    Status st = rr.plan(*ref, OpType::kResize, a, in, {false}, 1);
    REQUIRE_MESSAGE(st.ok(), st.message());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      REQUIRE(x86 != nullptr);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        ThreadedOpRunner r;
        st = r.plan(*x86, OpType::kResize, a, in, {false}, threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        CHECK(r.info().workspace_bytes > 0);  // the x86 kernel, not the reference it falls back to
        HostTensor got;
        st = r.run(in, &got);
        REQUIRE_MESSAGE(st.ok(), st.message());
        REQUIRE(got.data.size() == want.data.size());
        for (size_t i = 0; i < got.data.size(); ++i) {
          const float g = got.data[i], e = want.data[i];
          const bool same = std::memcmp(&g, &e, sizeof g) == 0 || (std::isnan(g) && std::isnan(e));
          CHECK_MESSAGE(same, "element ", i, ": ", g, " vs ", e);
        }
      }
    }
    ++checked;
  }
  MESSAGE("checked ", checked, " random Resize cases (", nan_inputs, " with NaN and inf inputs)");
  CHECK(checked == 90);
}

TEST_CASE("x86 Resize splits a large batch of planes over the threads with the reference's result") {
  // A bicubic 14x14 -> 20x20 over [3,48,...] planes (a position table's form) and a bilinear 2x upsample:
  // far above the threading threshold.
  auto ref = create_reference_backend();
  std::mt19937 rng(7);
  for (ResizeMode mode : {ResizeMode::kCubic, ResizeMode::kLinear}) {
    const Shape s{3, 48, 14, 14};
    const HostTensor x = random_tensor(s, rng);
    ResizeAttrs a;
    a.mode = mode;
    a.sizes = {mode == ResizeMode::kCubic ? 20 : 28, mode == ResizeMode::kCubic ? 20 : 28};
    for (int64_t out : a.sizes) {
      a.steps.push_back(14.0f / static_cast<float>(out));
      a.scales.push_back(static_cast<double>(out) / 14.0);
    }
    const std::vector<const HostTensor*> in{&x};
    ThreadedOpRunner rr;
    REQUIRE(rr.plan(*ref, OpType::kResize, a, in, {false}, 1).ok());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    auto x86 = make_x86(isa_levels().front());
    ThreadedOpRunner r;
    REQUIRE(r.plan(*x86, OpType::kResize, a, in, {false}, 2).ok());
    HostTensor got;
    REQUIRE(r.run(in, &got).ok());
    CHECK(got.data == want.data);
  }
}

}  // namespace test
}  // namespace vitrt
