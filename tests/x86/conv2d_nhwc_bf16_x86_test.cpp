// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Channels-last dense Conv2d at session precision bf16 (gemm_conv2d_bf16.cpp: the patches and the weight
// rounded to bf16, fp32 sums) against the conv in double, on odd shapes (odd channel counts: odd K and patch
// segments that start mid-pair; strided, padded, dilated and pointwise convs; every activation the GEMM
// epilogue applies), at 1 and 2 threads; skipped, saying so, without AVX512-BF16. Two bounds, as
// bf16_gemm_x86_test.cpp's:
//  * against the double conv of the operands rounded to bf16 (bf16_round): only the fp32 sums differ, so the
//    patch gather, the pair layout and the tails are checked to fp32 accuracy;
//  * against the double conv of the fp32 operands, with the error bf16 itself allows: 2^-7 · sqrt(K) ·
//    max|x| · max|w| (each operand off by at most 2^-8 relative, K roundings adding up like a random walk),
//    times 1.2 for the activation's slope.
// The output must also differ from the fp32 kernel's (the bf16 kernel ran), and a Conv2d the bf16 kernel
// declines (a fused residual, fewer than 128 input channels on overlapping or padded or dilated patches,
// NCHW, a non-constant weight, groups > 1) must give the fp32 kernel's output bit for bit. Non-overlapping
// patches (kernel = stride, no padding, no dilation: a ViT patch embedding, a PVT spatial reduction) run bf16
// at any input width.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_backend.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct ConvShape {
  int64_t b, h, w, cin, cout, kh, kw, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
  Activation act;
  bool bias;
};

double act_ref(Activation a, double x) {
  if (a == Activation::kRelu) return x > 0 ? x : 0;
  if (a == Activation::kGeluErf) return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (a == Activation::kGeluTanh)
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return x;
}

double bf16(float x) {
  return x86::bf16_to_float(x86::bf16_round(x));
}

std::unique_ptr<Backend> make_backend(bool bf16_on) {
  X86Options o;
  o.max_isa = X86Isa::kAvx512;
  o.read_env = false;
  o.bf16 = bf16_on;
  return create_x86_backend(o);
}

HostTensor run_conv(Backend& be, const Conv2dAttrs& a, const std::vector<HostTensor>& in, int threads,
                    const std::string& name, bool constant_weight = true) {
  std::vector<const HostTensor*> ptrs;
  for (const auto& t : in) ptrs.push_back(&t);
  std::vector<bool> constant = {false, constant_weight, true, false};
  constant.resize(in.size());
  ThreadedOpRunner r;
  Status st = r.plan(be, OpType::kConv2d, a, ptrs, constant, threads, name);
  REQUIRE_MESSAGE(st.ok(), st.message());
  HostTensor out;
  st = r.run(ptrs, &out);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return out;
}

TEST_CASE("x86 channels-last Conv2d in bf16: within bf16's rounding of the conv in double") {
  if (!(x86_has_avx512_bf16() && x86_detect_isa() >= X86Isa::kAvx512)) {
    MESSAGE("bf16 Conv2d skipped: this CPU has no AVX512-BF16 (or no AVX-512)");
    return;
  }
  std::mt19937 rng(4242);
  // At least 128 input channels (fewer stay fp32 unless the patches do not overlap: gemm_conv2d_bf16.cpp);
  // odd channel counts (odd K: a half-empty last pair; patch segments that start mid-pair). Fields: b, h, w,
  // cin, cout, kh, kw, stride h/w, pad h/w, dilation h/w.
  const ConvShape shapes[] = {
      {2, 9, 11, 131, 19, 3, 3, 2, 2, 1, 1, 1, 1, Activation::kGeluErf, true},  // a patch embedding
      {1, 14, 14, 320, 20, 2, 2, 2, 2, 0, 0, 1, 1, Activation::kNone, false},   // a spatial reduction
      {3, 7, 5, 128, 37, 3, 3, 2, 2, 1, 1, 1, 1, Activation::kRelu, true},      // an odd batch
      {2, 5, 7, 129, 11, 1, 1, 1, 1, 0, 0, 1, 1, Activation::kGeluTanh, true},  // pointwise
      {1, 12, 10, 130, 7, 3, 3, 1, 1, 2, 2, 2, 2, Activation::kRelu,
       false},  // dilated, padded past the kernel
      {1, 15, 13, 133, 70, 7, 7, 4, 4, 3, 3, 1, 1, Activation::kNone, true},  // a 7x7 stride-4 stem shape
      // h and w differ in stride, pad and dilation (an h attribute used for w, or w for h, is caught): a
      // dilated row kernel, and a 3x2 kernel whose rows lie inside the image (the contiguous-row copy).
      {2, 7, 9, 129, 13, 1, 3, 2, 1, 1, 0, 1, 2, Activation::kNone, true},
      {1, 9, 12, 128, 10, 3, 2, 1, 3, 0, 2, 2, 1, Activation::kRelu, false},
      // Non-overlapping patches on few channels: a ViT patch embedding (3 channels, 16x16 / 16), a LaViT
      // first-stage spatial reduction (64 channels, 8x8 / 8), an odd width with a 3x2 / (3, 2) kernel on
      // an image its patches do not tile (the last rows and columns are left out).
      {2, 32, 48, 3, 24, 16, 16, 16, 16, 0, 0, 1, 1, Activation::kNone, true},
      {1, 16, 24, 64, 33, 8, 8, 8, 8, 0, 0, 1, 1, Activation::kGeluErf, false},
      {3, 10, 11, 5, 7, 3, 2, 3, 2, 0, 0, 1, 1, Activation::kRelu, true}};
  double worst_exact = 0, worst_bf16 = 0;
  for (const ConvShape& s : shapes) {
    const std::string name =
        "conv_bf16 b" + std::to_string(s.b) + " " + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" +
        std::to_string(s.cin) + " -> " + std::to_string(s.cout) + " k" + std::to_string(s.kh) + "x" +
        std::to_string(s.kw) + " s" + std::to_string(s.stride_h) + "x" + std::to_string(s.stride_w) + " p" +
        std::to_string(s.pad_h) + "x" + std::to_string(s.pad_w) + " d" + std::to_string(s.dil_h) + "x" +
        std::to_string(s.dil_w);
    CAPTURE(name);
    Conv2dAttrs a;
    a.stride_h = static_cast<int32_t>(s.stride_h);
    a.stride_w = static_cast<int32_t>(s.stride_w);
    a.pad_h = static_cast<int32_t>(s.pad_h);
    a.pad_w = static_cast<int32_t>(s.pad_w);
    a.dilation_h = static_cast<int32_t>(s.dil_h);
    a.dilation_w = static_cast<int32_t>(s.dil_w);
    a.activation = s.act;
    a.channels_last = true;
    const int64_t k = s.cin * s.kh * s.kw;
    std::vector<HostTensor> in = {
        random_tensor(Shape{s.b, s.h, s.w, s.cin}, rng),
        random_tensor(Shape{s.cout, s.cin, s.kh, s.kw}, rng, 1.0f / std::sqrt(float(k)))};
    if (s.bias) in.push_back(random_tensor(Shape{s.cout}, rng, 0.5f));
    const int64_t ho = (s.h + 2 * s.pad_h - s.dil_h * (s.kh - 1) - 1) / s.stride_h + 1;
    const int64_t wo = (s.w + 2 * s.pad_w - s.dil_w * (s.kw - 1) - 1) / s.stride_w + 1;
    const std::vector<float>&x = in[0].data, &w = in[1].data;
    double xmax = 0, wmax = 0;
    for (float v : x) xmax = std::fmax(xmax, std::fabs(v));
    for (float v : w) wmax = std::fmax(wmax, std::fabs(v));
    const double bf16_tol = 1.2 * std::ldexp(1.0, -7) * std::sqrt(double(k)) * xmax * wmax;
    // The conv in double: with the fp32 operands (full) and with them rounded to bf16 (exact), and the sum of
    // the rounded terms' magnitudes (for the fp32-summation tolerance).
    const size_t outs = static_cast<size_t>(s.b * ho * wo * s.cout);
    std::vector<double> full(outs), exact(outs), mag(outs);
    for (int64_t b = 0; b < s.b; ++b)
      for (int64_t oy = 0; oy < ho; ++oy)
        for (int64_t ox = 0; ox < wo; ++ox)
          for (int64_t co = 0; co < s.cout; ++co) {
            const double b0 = s.bias ? in[2].data[co] : 0.0;
            double f = b0, e = b0, mg = std::fabs(b0);
            for (int64_t c = 0; c < s.cin; ++c)
              for (int64_t ky = 0; ky < s.kh; ++ky)
                for (int64_t kx = 0; kx < s.kw; ++kx) {
                  const int64_t iy = oy * s.stride_h - s.pad_h + ky * s.dil_h,
                                ix = ox * s.stride_w - s.pad_w + kx * s.dil_w;
                  if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                  const float xv = x[((b * s.h + iy) * s.w + ix) * s.cin + c];
                  const float wv = w[((co * s.cin + c) * s.kh + ky) * s.kw + kx];
                  f += static_cast<double>(xv) * wv;
                  e += bf16(xv) * bf16(wv);
                  mg += std::fabs(bf16(xv) * bf16(wv));
                }
            const size_t at = static_cast<size_t>(((b * ho + oy) * wo + ox) * s.cout + co);
            full[at] = act_ref(s.act, f);
            exact[at] = act_ref(s.act, e);
            mag[at] = mg;
          }
    auto fp32 = make_backend(false);
    const HostTensor f32 = run_conv(*fp32, a, in, 2, name);
    auto be = make_backend(true);
    for (int threads : {1, 2}) {
      const HostTensor got = run_conv(*be, a, in, threads, name);
      REQUIRE(got.data.size() == outs);
      int bad_exact = 0, bad_bf16 = 0;
      double from_fp32 = 0;
      for (size_t i = 0; i < outs; ++i) {
        const double exact_tol = 4e-7 * std::sqrt(double(k) + 1) * (mag[i] + 1) + 1e-6 * std::fabs(exact[i]);
        const double ee = std::fabs(got.data[i] - exact[i]), ef = std::fabs(got.data[i] - full[i]);
        worst_exact = std::fmax(worst_exact, ee / exact_tol);
        worst_bf16 = std::fmax(worst_bf16, ef / (bf16_tol + exact_tol));
        if (!(ee <= exact_tol) && bad_exact++ < 3)
          MESSAGE("y[", i, "] = ", got.data[i], ", want ", exact[i], " from the bf16 operands (tolerance ",
                  exact_tol, ")");
        if (!(ef <= bf16_tol + exact_tol) && bad_bf16++ < 3)
          MESSAGE("y[", i, "] = ", got.data[i], ", want ", full[i], " in fp32 (bf16 tolerance ", bf16_tol,
                  ")");
        from_fp32 = std::fmax(from_fp32, std::fabs(got.data[i] - f32.data[i]));
      }
      CHECK(bad_exact == 0);
      CHECK(bad_bf16 == 0);
      CHECK(from_fp32 > 0);  // the bf16 kernel ran
    }
  }
  MESSAGE("worst error / tolerance: ", worst_exact, " against the bf16 operands, ", worst_bf16,
          " against fp32");
  CHECK(worst_bf16 > 0.02);  // the bf16 bound is not so loose that anything passes
}

TEST_CASE("x86 Conv2d in bf16 where the bf16 kernel declines it: the fp32 output") {
  std::mt19937 rng(99);
  Conv2dAttrs a;
  a.stride_h = a.stride_w = 1;
  a.pad_h = a.pad_w = 1;
  a.channels_last = true;
  auto fp32 = make_backend(false);
  auto be = make_backend(true);
  for (int64_t cin : {3, 127}) {  // fewer than 128 input channels, overlapping patches: declined
    CAPTURE(cin);
    const std::vector<HostTensor> in = {random_tensor(Shape{2, 6, 5, cin}, rng),
                                        random_tensor(Shape{7, cin, 3, 3}, rng, 0.2f),
                                        random_tensor(Shape{7}, rng)};
    CHECK(run_conv(*be, a, in, 2, "few").data == run_conv(*fp32, a, in, 2, "few").data);
  }
  {  // kernel = stride on few channels, but padded or dilated (patches that reach past the image or skip
     // pixels): declined
    const std::vector<HostTensor> in = {random_tensor(Shape{2, 8, 9, 3}, rng),
                                        random_tensor(Shape{7, 3, 2, 2}, rng, 0.2f),
                                        random_tensor(Shape{7}, rng)};
    Conv2dAttrs p = a;
    p.stride_h = p.stride_w = 2;
    p.pad_h = 1;
    p.pad_w = 0;
    CHECK(run_conv(*be, p, in, 2, "padded patches").data == run_conv(*fp32, p, in, 2, "padded patches").data);
    p.pad_h = 0;
    p.dilation_w = 2;
    CHECK(run_conv(*be, p, in, 2, "dilated patches").data ==
          run_conv(*fp32, p, in, 2, "dilated patches").data);
  }
  const std::vector<HostTensor> in = {random_tensor(Shape{2, 6, 5, 128}, rng),
                                      random_tensor(Shape{7, 128, 3, 3}, rng, 0.05f),
                                      random_tensor(Shape{7}, rng), random_tensor(Shape{2, 6, 5, 7}, rng)};
  CHECK(run_conv(*be, a, in, 2, "residual").data == run_conv(*fp32, a, in, 2, "residual").data);
  // A weight computed at run time: not packed at plan time, so fp32.
  const std::vector<HostTensor> dense = {random_tensor(Shape{2, 6, 5, 128}, rng),
                                         random_tensor(Shape{7, 128, 3, 3}, rng, 0.05f),
                                         random_tensor(Shape{7}, rng)};
  CHECK(run_conv(*be, a, dense, 2, "runtime weight", false).data ==
        run_conv(*fp32, a, dense, 2, "runtime weight", false).data);
  // Grouped (groups 2 on 256 input channels: 128 per group): fp32.
  Conv2dAttrs grouped = a;
  grouped.groups = 2;
  const std::vector<HostTensor> gin = {random_tensor(Shape{1, 5, 6, 256}, rng),
                                       random_tensor(Shape{8, 128, 3, 3}, rng, 0.05f),
                                       random_tensor(Shape{8}, rng)};
  CHECK(run_conv(*be, grouped, gin, 2, "grouped").data == run_conv(*fp32, grouped, gin, 2, "grouped").data);
  // NCHW whose last dimension (W) is 128, as many as the input channels: the layout, not the size, declines.
  Conv2dAttrs nchw = a;
  nchw.channels_last = false;
  const std::vector<HostTensor> cin = {random_tensor(Shape{1, 128, 3, 128}, rng),
                                       random_tensor(Shape{6, 128, 3, 3}, rng, 0.05f),
                                       random_tensor(Shape{6}, rng)};
  CHECK(run_conv(*be, nchw, cin, 2, "nchw").data == run_conv(*fp32, nchw, cin, 2, "nchw").data);
}

}  // namespace
}  // namespace test
}  // namespace vitrt
