// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The channels-last depthwise row kernel's bf16 output (depthwise_nhwc_row_bf16_avx512bf16, which ConvMlp's
// fc2 reads at session precision bf16) against its fp32 output: every value must be bf16_round of the fp32
// row's value bit for bit (the conv's arithmetic is the same; only the store differs), at pixel ox's slot
// ox·ld_bf16, with a zero after the C values when C is odd (the last pair's second half) and
// nothing else written (a poisoned gap past it stays); bf16_round's bits must also be those of
// gemm_bf16_pack_rows (vcvtne2ps2bf16) on the same row. Odd shapes: C from 1 to 70
// (partial vectors, odd C), the 3×3 stride-1 strip path and the generic one (5×5, 1×3, stride 2, dilation),
// edges, rows with only edge pixels, every activation the row kernel has; and inputs with ties, denormals,
// infinities, NaN and values that round past the largest bf16. Skipped, saying so, without AVX512-BF16.
// Separately, at AVX-512 and at AVX2 where the CPU has them: the fp32 row's erf GELU is the ISA's table one
// (gelu_table_avx512.h, gelu_table_avx2.h), so the row with it must equal the row without activation put
// through gelu_erf_table_avx512 / gelu_erf_table_avx2, bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/x86/depthwise_nhwc.h"
#include "backends/cpu/x86/gelu_table.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace test {
namespace {

using x86::DepthwiseRow;
using x86::GemmAct;

struct RowShape {
  int64_t h, w, c, kh, kw, stride, pad, dilation;
  GemmAct act;
  bool bias;
};

float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// Every output row of one image: the fp32 row and the bf16 row must agree as described above.
void check_rows(const RowShape& s, const std::vector<float>& src, const std::vector<float>& wt,
                const std::vector<float>& bias, const std::string& name) {
  CAPTURE(name);
  const int64_t ho = (s.h + 2 * s.pad - s.dilation * (s.kh - 1) - 1) / s.stride + 1;
  const int64_t wo = (s.w + 2 * s.pad - s.dilation * (s.kw - 1) - 1) / s.stride + 1;
  REQUIRE(ho > 0);
  REQUIRE(wo > 0);
  const int64_t even = 2 * x86::gemm_bf16_pairs(s.c), ld = even + 6;  // 6 poisoned values between pixels
  constexpr uint16_t kPoison = 0x7fa5;                                // a NaN no rounding produces
  DepthwiseRow r;
  r.src = src.data();
  r.h = s.h;
  r.w = s.w;
  r.c = s.c;
  r.wt = wt.data();
  r.kh = s.kh;
  r.kw = s.kw;
  r.stride_h = r.stride_w = s.stride;
  r.pad_h = r.pad_w = s.pad;
  r.dilation_h = r.dilation_w = s.dilation;
  r.bias = s.bias ? bias.data() : nullptr;
  r.act = s.act;
  r.wo = wo;
  r.ld_bf16 = ld;
  std::vector<float> f32(static_cast<size_t>(wo * s.c));
  std::vector<uint16_t> b16(static_cast<size_t>(wo * ld));
  std::vector<float> hw(static_cast<size_t>(wo * even / 2));
  int64_t mismatches = 0, pad_bad = 0, gap_bad = 0, hw_bad = 0;
  for (int64_t oy = 0; oy < ho; ++oy) {
    r.oy = oy;
    r.dst = f32.data();
    x86::depthwise_nhwc_row_avx512(r);
    std::fill(b16.begin(), b16.end(), kPoison);
    DepthwiseRow rb = r;
    rb.dst = nullptr;  // the bf16 row must not write the fp32 one
    rb.dst_bf16 = b16.data();
    x86::depthwise_nhwc_row_bf16_avx512bf16(rb);
    for (int64_t ox = 0; ox < wo; ++ox) {
      for (int64_t c = 0; c < s.c; ++c) {
        const uint16_t want = x86::bf16_round(f32[static_cast<size_t>(ox * s.c + c)]);
        if (b16[static_cast<size_t>(ox * ld + c)] != want && ++mismatches <= 5)
          MESSAGE("row ", oy, " pixel ", ox, " channel ", c, ": fp32 ",
                  f32[static_cast<size_t>(ox * s.c + c)], " rounds to ", want, ", the bf16 row has ",
                  b16[static_cast<size_t>(ox * ld + c)]);
      }
      if (s.c < even && b16[static_cast<size_t>(ox * ld + s.c)] != 0) ++pad_bad;
      for (int64_t j = even; j < ld; ++j)
        if (b16[static_cast<size_t>(ox * ld + j)] != kPoison) ++gap_bad;
    }
    x86::gemm_bf16_pack_rows(f32.data(), s.c, wo, s.c, hw.data(), even / 2);
    for (int64_t ox = 0; ox < wo; ++ox)
      if (std::memcmp(&hw[static_cast<size_t>(ox * even / 2)], &b16[static_cast<size_t>(ox * ld)],
                      static_cast<size_t>(even) * 2) != 0)
        ++hw_bad;
  }
  CHECK(mismatches == 0);
  CHECK(pad_bad == 0);
  CHECK(gap_bad == 0);
  CHECK(hw_bad == 0);
}

// One ISA's fp32 row against its table GELU on array form.
void check_row_gelu_is_table(void (*row)(const DepthwiseRow&), void (*table)(const float*, float*, int64_t)) {
  std::mt19937 rng(2612);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  // The k3s1 strips with a partial vector, the generic strips, stride 2, rows of edge pixels only.
  const int64_t shapes[][5] = {{5, 21, 70, 3, 1}, {6, 17, 19, 5, 1}, {9, 23, 48, 3, 2}, {2, 3, 40, 3, 1}};
  for (const auto& sh : shapes) {
    const int64_t h = sh[0], w = sh[1], c = sh[2], k = sh[3], stride = sh[4], pad = k / 2;
    CAPTURE(h);
    CAPTURE(c);
    CAPTURE(k);
    std::vector<float> src(static_cast<size_t>(h * w * c)), wt(static_cast<size_t>(k * k * c)),
        bias(static_cast<size_t>(c));
    for (float& v : src) v = normal(rng);
    for (float& v : wt) v = normal(rng) / static_cast<float>(k * k);
    for (float& v : bias) v = 0.3f * normal(rng);
    DepthwiseRow r;
    r.src = src.data();
    r.h = h;
    r.w = w;
    r.c = c;
    r.wt = wt.data();
    r.kh = r.kw = k;
    r.stride_h = r.stride_w = stride;
    r.pad_h = r.pad_w = pad;
    r.bias = bias.data();
    r.wo = (w + 2 * pad - k) / stride + 1;
    const int64_t ho = (h + 2 * pad - k) / stride + 1;
    std::vector<float> gelu(static_cast<size_t>(r.wo * c)), plain(gelu.size());
    int64_t bad_rows = 0;
    for (int64_t oy = 0; oy < ho; ++oy) {
      r.oy = oy;
      std::fill(gelu.begin(), gelu.end(), std::numeric_limits<float>::quiet_NaN());
      std::fill(plain.begin(), plain.end(), std::numeric_limits<float>::quiet_NaN());
      DepthwiseRow rg = r, rp = r;
      rg.act = GemmAct::kGeluErf;
      rg.dst = gelu.data();
      rp.act = GemmAct::kNone;
      rp.dst = plain.data();
      row(rg);
      row(rp);
      table(plain.data(), plain.data(), r.wo * c);
      if (std::memcmp(gelu.data(), plain.data(), gelu.size() * sizeof(float)) != 0) ++bad_rows;
    }
    CHECK(bad_rows == 0);
  }
}

TEST_CASE("x86 depthwise fp32 row at AVX-512: its erf GELU is the table GELU, bit for bit") {
  if (x86_detect_isa() < X86Isa::kAvx512) {
    MESSAGE("AVX-512 depthwise row skipped: this CPU has no AVX-512");
    return;
  }
  check_row_gelu_is_table(x86::depthwise_nhwc_row_avx512, x86::gelu_erf_table_avx512);
}

TEST_CASE("x86 depthwise fp32 row at AVX2: its erf GELU is the AVX2 table GELU, bit for bit") {
  if (x86_detect_isa() < X86Isa::kAvx2) {
    MESSAGE("AVX2 depthwise row skipped: this CPU has no AVX2 + FMA");
    return;
  }
  check_row_gelu_is_table(x86::depthwise_nhwc_row_avx2, x86::gelu_erf_table_avx2);
}

TEST_CASE("x86 depthwise row with bf16 output: bf16_round of the fp32 row, bit for bit") {
  if (x86_detect_isa() < X86Isa::kAvx512 || !x86_has_avx512_bf16()) {
    MESSAGE("bf16-output depthwise row skipped: this CPU has no AVX-512 with AVX512-BF16");
    return;
  }
  std::mt19937 rng(2611);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const RowShape shapes[] = {
      {5, 21, 70, 3, 3, 1, 1, 1, GemmAct::kGeluErf, true},    // the k3s1 strips, a partial vector, even C
      {4, 19, 33, 3, 3, 1, 1, 1, GemmAct::kRelu, true},       // odd C: the pad zero
      {3, 12, 1, 3, 3, 1, 1, 1, GemmAct::kNone, false},       // one channel
      {6, 17, 16, 5, 5, 1, 2, 1, GemmAct::kGeluTanh, true},   // generic strips, whole vectors
      {7, 9, 7, 1, 3, 1, 0, 1, GemmAct::kSilu, false},        // 1×3 (kh = 1), odd C
      {9, 23, 48, 3, 3, 2, 1, 1, GemmAct::kHardSwish, true},  // stride 2
      {7, 11, 19, 3, 3, 1, 2, 2, GemmAct::kNone, true},       // dilation: more edge pixels
      {2, 3, 40, 3, 3, 1, 1, 1, GemmAct::kGeluErf, true},     // rows of edge pixels only
  };
  for (const RowShape& s : shapes) {
    std::vector<float> src(static_cast<size_t>(s.h * s.w * s.c)), wt(static_cast<size_t>(s.kh * s.kw * s.c)),
        bias(static_cast<size_t>(s.c));
    for (float& v : src) v = normal(rng);
    for (float& v : wt) v = normal(rng) / static_cast<float>(s.kh * s.kw);
    for (float& v : bias) v = 0.3f * normal(rng);
    check_rows(s, src, wt, bias,
               "h" + std::to_string(s.h) + " w" + std::to_string(s.w) + " c" + std::to_string(s.c) + " k" +
                   std::to_string(s.kh) + "x" + std::to_string(s.kw) + " s" + std::to_string(s.stride) +
                   " p" + std::to_string(s.pad) + " d" + std::to_string(s.dilation));
  }

  // Special values through a 1×1 identity conv (weight 1, no bias, no activation: the fp32 row is the
  // input): ties to even both ways, a carry into the exponent, values past the largest bf16, denormals,
  // infinities, NaNs (signalling ones quieted), zeros. 35 channels: two whole vectors and a partial one.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {from_bits(0x3f808000u),
                                      from_bits(0x3f818000u),
                                      from_bits(0x3f80ffffu),
                                      from_bits(0x3f7fffffu),
                                      from_bits(0xbf808000u),
                                      from_bits(0xbf818000u),
                                      from_bits(0x3f808001u),
                                      from_bits(0x7f7fffffu),
                                      from_bits(0xff7fffffu),
                                      from_bits(0x7f7f7fffu),
                                      from_bits(0x00000001u),
                                      from_bits(0x807fffffu),
                                      from_bits(0x00400000u),
                                      inf,
                                      -inf,
                                      from_bits(0x7fc00000u),
                                      from_bits(0x7f800001u),
                                      from_bits(0xffa00000u),
                                      0.0f,
                                      -0.0f,
                                      1.0f,
                                      -1.0f,
                                      from_bits(0x00800000u),
                                      from_bits(0x80800000u),
                                      from_bits(0x3e99999au),
                                      from_bits(0xc2c8f5c3u),
                                      from_bits(0x4b7fffffu),
                                      from_bits(0x33800000u),
                                      from_bits(0x3f7f8000u),
                                      from_bits(0x3f7e8000u),
                                      from_bits(0x47efffffu),
                                      from_bits(0x0080ffffu),
                                      from_bits(0x01008000u),
                                      from_bits(0x7effffffu),
                                      from_bits(0x3c000001u)};
  const RowShape one = {1, 3, static_cast<int64_t>(special.size()), 1, 1, 1, 0, 1, GemmAct::kNone, false};
  std::vector<float> src;
  for (int p = 0; p < 3; ++p)  // three pixels: the values rotated by p
    for (size_t i = 0; i < special.size(); ++i)
      src.push_back(special[(i + static_cast<size_t>(p)) % special.size()]);
  check_rows(one, src, std::vector<float>(special.size(), 1.0f), std::vector<float>(special.size(), 0.0f),
             "special values");
  // The rounding itself, on those values: bf16_round's rules (checked against the hardware above).
  CHECK(x86::bf16_round(from_bits(0x3f808000u)) == 0x3f80);  // tie, even: down
  CHECK(x86::bf16_round(from_bits(0x3f818000u)) == 0x3f82);  // tie, odd: up
  CHECK(x86::bf16_round(from_bits(0x7f7fffffu)) == 0x7f80);  // past the largest bf16: infinity
  CHECK(x86::bf16_round(from_bits(0x807fffffu)) == 0x8000);  // denormal: zero of its sign
  CHECK(x86::bf16_round(from_bits(0x7f800001u)) == 0x7fc0);  // signalling NaN: quiet
}

}  // namespace
}  // namespace test
}  // namespace vitrt
