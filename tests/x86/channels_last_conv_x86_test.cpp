// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The cpu backend's channels-last Conv2d ([B,H,W,C] in and out, the form the planner's channels_last_conv
// pass gives the PVT v2 / LaViT spatial-reduction, patch-embedding and MLP convs) against the reference
// backend on random odd shapes: dense convs (patches gathered per row chunk into the packed GEMM, or the
// input rows used in place for a pointwise conv) and depthwise convs (register strips of pixels × channels,
// edge pixels checked, channel tails masked), every activation, with and without bias, batch 1..9, both ISA
// levels, 1 and 2 threads.
#include <doctest/doctest.h>

#include "checked_op_case.h"

namespace vitrt {
namespace test {
namespace {

// Dense: rows per task cross images, chunks end off the register tile.
TEST_CASE("cpu channels-last Conv2d (gathered patches + packed GEMM) matches the reference") {
  std::mt19937 rng(5150);
  int n_cases = 0;
  auto check = [&](int64_t b, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw, int s,
                   int p, int d) {
    const Activation act = kActivations[n_cases % kNumActivations];
    check_case(conv_case(rng, b, cin, h, w, cout, kh, kw, s, p, d, 1, act, n_cases % 3 != 2, true));
    ++n_cases;
  };
  // Scaled-down model shapes: sr convs k = s = 8, 4, 2; patch embeddings 3×3 s2 p1 and 4×4 s4; 1×1.
  check(2, 32, 56, 48, 32, 8, 8, 8, 0, 1);
  check(1, 20, 28, 28, 20, 4, 4, 4, 0, 1);
  check(4, 33, 14, 14, 35, 2, 2, 2, 0, 1);
  check(3, 16, 23, 29, 40, 3, 3, 2, 1, 1);
  check(2, 24, 17, 15, 33, 4, 4, 4, 0, 1);
  check(2, 17, 9, 11, 50, 1, 1, 1, 0, 1);
  check(9, 5, 7, 9, 7, 1, 1, 1, 0, 1);
  // Padding, dilation, rectangular kernels, a 1×1 conv with stride, one output pixel, many output channels
  // with a patch longer than a chunk row budget.
  check(1, 6, 21, 20, 10, 3, 3, 1, 2, 2);
  check(9, 5, 7, 9, 7, 3, 2, 2, 1, 1);
  check(2, 9, 13, 12, 11, 1, 1, 2, 0, 1);
  check(5, 4, 6, 6, 130, 6, 6, 6, 0, 1);
  check(1, 257, 9, 9, 19, 7, 7, 1, 3, 1);
  std::uniform_int_distribution<int> ch(1, 40), hw(5, 40), kern(1, 5), stride(1, 4), items(1, 9);
  for (int r = 0; r < 8; ++r) {
    const int64_t kh = kern(rng), kw = kern(rng), s = stride(rng), p = std::min<int64_t>(kh, kw) / 2;
    check(items(rng), ch(rng), hw(rng), hw(rng), ch(rng), kh, kw, static_cast<int>(s), static_cast<int>(p),
          1);
  }
  MESSAGE("checked ", n_cases, " channels-last Conv2d cases");
}

// Depthwise (groups = C = Cout): the PVT v2 / LaViT MLP conv (3×3 s1 p1) at channel counts on and off the
// vector width, rows narrower than a strip and wider than several, strides, dilation, large padding (no
// interior pixel at all), 5×5 and rectangular kernels.
TEST_CASE("cpu channels-last depthwise Conv2d (register strips) matches the reference") {
  std::mt19937 rng(8086);
  int n_cases = 0;
  auto check = [&](int64_t b, int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw, int s, int p, int d) {
    const Activation act = kActivations[n_cases % kNumActivations];
    check_case(
        conv_case(rng, b, c, h, w, c, kh, kw, s, p, d, static_cast<int>(c), act, n_cases % 3 != 2, true));
    ++n_cases;
  };
  check(2, 64, 14, 14, 3, 3, 1, 1, 1);
  check(1, 48, 28, 28, 3, 3, 1, 1, 1);
  check(3, 37, 7, 5, 3, 3, 1, 1, 1);
  check(2, 19, 8, 6, 3, 3, 2, 1, 1);
  check(2, 33, 6, 7, 5, 5, 1, 2, 1);
  check(9, 8, 3, 3, 3, 3, 1, 1, 1);
  check(1, 7, 23, 17, 3, 3, 1, 1, 1);
  check(2, 24, 9, 31, 3, 3, 1, 2, 2);
  check(1, 16, 4, 4, 5, 5, 1, 4, 1);
  check(2, 21, 11, 13, 2, 4, 3, 1, 1);
  check(1, 1, 9, 40, 3, 3, 1, 1, 1);
  std::uniform_int_distribution<int> ch(1, 70), hw(1, 33), kern(1, 5), stride(1, 3), items(1, 9);
  for (int r = 0; r < 10; ++r) {
    const int64_t kh = kern(rng), kw = kern(rng), s = stride(rng), p = std::min<int64_t>(kh, kw) / 2;
    const int64_t h = std::max<int64_t>(hw(rng), kh), w = std::max<int64_t>(hw(rng), kw);
    check(items(rng), ch(rng), h, w, kh, kw, static_cast<int>(s), static_cast<int>(p), 1);
  }
  MESSAGE("checked ", n_cases, " channels-last depthwise Conv2d cases");
}

}  // namespace
}  // namespace test
}  // namespace vitrt
