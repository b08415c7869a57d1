// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The cpu backend's image-layout depthwise Conv2d (groups = C = Cout, src [B,C,H,W]: the register-blocked
// plane kernel over zero-padded, stride-phased scratch rows, conv2d.cpp) against the reference backend on
// random odd shapes: kernels 3, 5 and 7 at strides 1 and 2 with no, "same" and oversized padding (the
// MobileNetV3 / EfficientNet / ConvNeXt convs), rows narrower than a vector (blocks of stacked rows) and
// wider than several (blocks of vectors, a masked last one), dilation, rectangular kernels and strides,
// planes split into row blocks (few channels) and rows too wide for one block's scratch budget; every
// activation, with and without bias, both ISA levels, 1 and 2 threads, outputs poisoned (checked_op_case.h).
#include <doctest/doctest.h>

#include "checked_op_case.h"

namespace vitrt {
namespace test {
namespace {

struct DwShape {
  int64_t b, c, h, w, kh, kw;
  int sh, sw, ph, pw, dh, dw;
};

// conv_case's depthwise case with separate height and width attributes.
GemmCase dw_case(std::mt19937& rng, const DwShape& s, Activation act, bool bias) {
  GemmCase g =
      conv_case(rng, s.b, s.c, s.h, s.w, s.c, s.kh, s.kw, s.sh, s.ph, s.dh, static_cast<int>(s.c), act, bias);
  for (OpAttrs* attrs : {&g.attrs, &g.bound_attrs}) {
    Conv2dAttrs& a = std::get<Conv2dAttrs>(*attrs);
    a.stride_w = s.sw;
    a.pad_w = s.pw;
    a.dilation_w = s.dw;
  }
  g.name += " (w: s" + std::to_string(s.sw) + " p" + std::to_string(s.pw) + " d" + std::to_string(s.dw) + ")";
  return g;
}

TEST_CASE("cpu depthwise Conv2d (NCHW, register-blocked planes) matches the reference") {
  std::mt19937 rng(2802);
  int n_cases = 0;
  auto check = [&](const DwShape& s) {
    check_case(dw_case(rng, s, kActivations[n_cases % kNumActivations], n_cases % 3 != 2));
    ++n_cases;
  };
  // Scaled-down model layers: MobileNetV3 / EfficientNet 3×3 and 5×5 at strides 1 and 2, ConvNeXt 7×7 p3.
  check({1, 16, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1});
  check({2, 24, 28, 28, 5, 5, 1, 1, 2, 2, 1, 1});
  check({1, 40, 29, 29, 5, 5, 2, 2, 2, 2, 1, 1});
  check({1, 20, 14, 14, 7, 7, 1, 1, 3, 3, 1, 1});
  check({2, 33, 7, 7, 7, 7, 1, 1, 3, 3, 1, 1});
  check({1, 9, 112, 112, 3, 3, 1, 1, 1, 1, 1, 1});
  // Every k in {3, 5, 7} × stride {1, 2} × padding {0, k/2, k/2 + 2} on random odd shapes.
  std::uniform_int_distribution<int> ch(1, 37), hw(1, 45), items(1, 3);
  for (int k : {3, 5, 7}) {
    for (int s : {1, 2}) {
      for (int p : {0, k / 2, k / 2 + 2}) {
        const int64_t h = std::max<int64_t>(hw(rng), k - 2 * p), w = std::max<int64_t>(hw(rng), k - 2 * p);
        check({items(rng), ch(rng), h, w, k, k, s, s, p, p, 1, 1});
      }
    }
  }
  // Dilation, rectangular kernels and mixed strides, stride larger than the kernel, 1×1, a single output.
  check({2, 5, 19, 23, 3, 3, 1, 1, 2, 2, 2, 2});
  check({1, 6, 17, 31, 5, 3, 2, 1, 2, 3, 1, 2});
  check({3, 7, 13, 40, 3, 5, 1, 3, 1, 2, 1, 1});
  check({1, 4, 9, 9, 2, 2, 3, 3, 0, 0, 1, 1});
  check({2, 3, 8, 11, 1, 1, 1, 2, 0, 0, 1, 1});
  check({1, 5, 7, 7, 7, 7, 1, 1, 0, 0, 1, 1});
  // Few channels (a plane split into row blocks); rows past the scratch budget of one block.
  check({1, 1, 61, 77, 5, 5, 1, 1, 2, 2, 1, 1});
  check({2, 2, 40, 33, 3, 3, 2, 2, 1, 1, 1, 1});
  check({1, 1, 200, 3000, 7, 7, 1, 1, 3, 3, 1, 1});
  // Dilation and padding of 10^5 (a 3×3 output): the scratch would be 10^10 floats; the kernel declines it
  // and the reference kernel runs it (planning must not fail on the workspace).
  check({1, 3, 3, 3, 3, 3, 1, 1, 100000, 100000, 100000, 100000});
  MESSAGE("checked ", n_cases, " depthwise Conv2d cases");
}

}  // namespace
}  // namespace test
}  // namespace vitrt
