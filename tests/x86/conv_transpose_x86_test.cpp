// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ConvTranspose on the x86 backend (packed GEMM panels + col2im, backends/cpu/x86/conv_transpose.cpp) against
// the reference kernel's direct scatter: random strides 1-3, dilations 1-3, groups, asymmetric pads and
// output_padding on odd shapes, with and without bias, every ISA, 1 and 2 threads (outputs poisoned with NaN
// by the runner, so an unwritten element fails). The sums run in another order, so they agree to rounding.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

std::string describe(const Shape& x, const Shape& w, const ConvTransposeAttrs& a) {
  return x.str() + " w " + w.str() + " s" + std::to_string(a.stride_h) + "x" + std::to_string(a.stride_w) +
         " d" + std::to_string(a.dilation_h) + "x" + std::to_string(a.dilation_w) + " pads " +
         std::to_string(a.pad_top) + "/" + std::to_string(a.pad_left) + "/" + std::to_string(a.pad_bottom) +
         "/" + std::to_string(a.pad_right) + " op " + std::to_string(a.output_padding_h) + "x" +
         std::to_string(a.output_padding_w) + " g" + std::to_string(a.groups);
}

}  // namespace

TEST_CASE("x86 ConvTranspose matches the reference on random odd shapes (every ISA, 1 and 2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(4141);
  auto pick = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
  };
  int checked = 0;
  for (int trial = 0; trial < 80; ++trial) {
    ConvTransposeAttrs a;
    a.groups = pick(1, 3);
    const int64_t cin = a.groups * pick(1, 7), cout = a.groups * pick(1, 6);
    const int64_t kh = pick(1, 5), kw = pick(1, 5);
    a.stride_h = pick(1, 3);
    a.stride_w = pick(1, 3);
    a.dilation_h = pick(1, 3);
    a.dilation_w = pick(1, 3);
    a.pad_top = pick(0, 3);
    a.pad_left = pick(0, 3);
    a.pad_bottom = pick(0, 3);
    a.pad_right = pick(0, 3);
    a.output_padding_h = pick(0, 2);
    a.output_padding_w = pick(0, 2);
    // Widths around the AVX-512 and AVX2 panel widths (16-64 columns), so panels end mid-row.
    const int64_t widths[] = {1, 3, 5, 8, 11, 17, 23, 40};
    const Shape xs{pick(1, 3), cin, pick(1, 9), widths[rng() % 8]};
    const Shape ws{cin, cout / a.groups, kh, kw};
    int64_t ho = 0, wo = 0;
    if (!conv_transpose_output_size(xs[2], kh, a.pad_top, a.pad_bottom, a.stride_h, a.dilation_h,
                                    a.output_padding_h, &ho) ||
        !conv_transpose_output_size(xs[3], kw, a.pad_left, a.pad_right, a.stride_w, a.dilation_w,
                                    a.output_padding_w, &wo))
      continue;
    INFO(describe(xs, ws, a));
    const HostTensor x = random_tensor(xs, rng);
    const HostTensor w =
        random_tensor(ws, rng, 1.0f / std::sqrt(static_cast<float>(cin / a.groups * kh * kw)));
    const HostTensor bias = random_tensor(Shape{cout}, rng, 0.5f);
    const bool with_bias = trial % 3 != 0;
    std::vector<const HostTensor*> in{&x, &w};
    std::vector<bool> constant{false, true};
    if (with_bias) {
      in.push_back(&bias);
      constant.push_back(true);
    }
    ThreadedOpRunner rr;
    Status st = rr.plan(*ref, OpType::kConvTranspose, a, in, constant, 1);
    REQUIRE_MESSAGE(st.ok(), st.message());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    REQUIRE(want.shape == Shape({xs[0], cout, ho, wo}));
    double scale = 1;
    for (float v : want.data) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      REQUIRE(x86 != nullptr);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        ThreadedOpRunner r;
        st = r.plan(*x86, OpType::kConvTranspose, a, in, constant, threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        CHECK(r.info().workspace_bytes > 0);  // the GEMM kernel, not the reference (which needs none)
        HostTensor got;
        st = r.run(in, &got);
        REQUIRE_MESSAGE(st.ok(), st.message());
        REQUIRE(got.data.size() == want.data.size());
        for (size_t i = 0; i < got.data.size(); ++i)
          if (!(std::fabs(static_cast<double>(got.data[i]) - want.data[i]) <= 2e-6 * scale)) {
            FAIL_CHECK("element ", i, ": ", got.data[i], " vs ", want.data[i]);
            break;
          }
      }
    }
    ++checked;
  }
  MESSAGE("checked ", checked, " random ConvTranspose cases");
  CHECK(checked >= 50);
}

TEST_CASE("x86 ConvTranspose with a weight computed at run time falls back to the reference kernel") {
  auto ref = create_reference_backend();
  std::mt19937 rng(7);
  ConvTransposeAttrs a;
  a.stride_h = a.stride_w = 2;
  const HostTensor x = random_tensor(Shape{2, 3, 4, 5}, rng);
  const HostTensor w = random_tensor(Shape{3, 2, 3, 3}, rng);
  const std::vector<const HostTensor*> in{&x, &w};
  ThreadedOpRunner rr, r;
  REQUIRE(rr.plan(*ref, OpType::kConvTranspose, a, in, {false, false}, 1).ok());
  REQUIRE(r.plan(*make_x86(isa_levels().front()), OpType::kConvTranspose, a, in, {false, false}, 2).ok());
  HostTensor want, got;
  REQUIRE(rr.run(in, &want).ok());
  REQUIRE(r.run(in, &got).ok());
  CHECK(r.info().workspace_bytes == 0);
  CHECK(got.data == want.data);
}

}  // namespace test
}  // namespace vitrt
