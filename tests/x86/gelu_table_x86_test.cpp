// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The table GELUs (gelu_table_avx512.h, the erf GELU of every AVX-512 GEMM epilogue and depthwise row, fp32
// and bf16; gelu_table_avx2.h, the AVX2 ones') against the erf GELU in double (std::erf) on a dense sweep: 4
// million points over [-10, 10], the floats next to every interval's boundary and centre, and small values
// down to denormals. Their results are stored as floats, so each is held to the accuracy its fit measured
// (tools/fit_gelu_table.py): within 1e-7·|x| of the exact GELU (measured 8.9e-8 and 8.7e-8), which is below
// the 1.1e-7·|x| of the float formula x/2·(1 + erf(x/√2)) that PyTorch and the reference compute, and their
// erf (half_erf_table_*) within 5e-7 relative of std::erf (measured 4.0e-7 and 1.8e-7). Then the special
// values: zeros, infinities, NaN, huge values. Each table is skipped, saying so, on a CPU without its ISA.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/x86/gelu_table.h"
#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace test {
namespace {

double exact_gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

std::vector<float> run_on(void (*f)(const float*, float*, int64_t), const std::vector<float>& x) {
  std::vector<float> y(x.size(), std::numeric_limits<float>::quiet_NaN());  // poisoned
  f(x.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

using ArrayFn = void (*)(const float*, float*, int64_t);

// One table: its GELU and its erf part, the width of its intervals and how many of them it has.
void check_table(const char* name, ArrayFn gelu, ArrayFn half_erf, double width, int intervals) {
  std::vector<float> x;
  for (int64_t i = 0; i <= 4000000; ++i) x.push_back(static_cast<float>(-10.0 + 20.0 * i / 4000000.0));
  // 64 floats either side of every interval boundary ((n + 1/2)·width) and centre (n·width), both signs.
  for (int n = 0; n < 2 * intervals + 6; ++n) {
    const float at = static_cast<float>(n * width / 2.0);
    float below = at, above = at;
    for (int k = 0; k < 64; ++k) {
      below = std::nextafter(below, 0.0f);
      above = std::nextafter(above, 100.0f);
      for (float v : {below, above, at}) {
        x.push_back(v);
        x.push_back(-v);
      }
    }
  }
  for (double s = 1e-38; s < 1e-2; s *= 1.01) {
    x.push_back(static_cast<float>(s));
    x.push_back(static_cast<float>(-s));
  }
  x.push_back(std::numeric_limits<float>::denorm_min());
  x.push_back(-std::numeric_limits<float>::denorm_min() * 12345.0f);
  x.resize(x.size() / 16 * 16 + 16 + 7, 0.25f);  // a partial vector at the end
  REQUIRE(x.size() % 16 != 0);
  const std::vector<float> y = run_on(gelu, x);
  const std::vector<float> g = run_on(half_erf, x);
  double worst_gelu = 0, worst_erf = 0, at_gelu = 0, at_erf = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    // Past the float rounding of a result in the denormals (x/2 of the smallest denormal is not a float):
    // one denormal step is allowed on top.
    const double denormal_step = std::ldexp(1.0, -149);
    const double e =
        std::max(0.0, std::abs(y[i] - exact_gelu(xi)) - denormal_step) / std::max(std::abs(xi), 1e-300);
    if (!(e <= worst_gelu)) worst_gelu = e, at_gelu = xi;
    if (xi != 0) {
      const double erf_want = std::erf(std::abs(xi) / std::sqrt(2.0));
      const double er = std::max(0.0, std::abs(2.0 * g[i] - erf_want) - 2 * denormal_step) / erf_want;
      if (!(er <= worst_erf)) worst_erf = er, at_erf = xi;
    }
  }
  MESSAGE(std::string(name), " table GELU: largest |error|/|x| ", worst_gelu, " at x = ", at_gelu,
          "; its erf's largest relative error ", worst_erf, " at x = ", at_erf);
  CHECK(worst_gelu <= 1e-7);
  CHECK(worst_erf <= 5e-7);

  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> special = {0.0f,  -0.0f,  inf,   -inf,   nan,   -nan,   1e30f, -1e30f,
                                      3e38f, -3e38f, 20.0f, -20.0f, 5.72f, -5.72f, 5.6f,  -5.6f};
  const std::vector<float> s = run_on(gelu, special);
  CHECK(s[0] == 0.0f);
  CHECK(s[1] == 0.0f);
  CHECK(s[2] == inf);
  CHECK(std::isnan(s[3]));  // −inf·0, as the float formula
  CHECK(std::isnan(s[4]));
  CHECK(std::isnan(s[5]));
  CHECK(s[6] == 1e30f);
  CHECK(s[7] == 0.0f);
  CHECK(s[8] == 3e38f);
  CHECK(s[9] == 0.0f);
  CHECK(s[10] == 20.0f);
  CHECK(s[11] == 0.0f);
  for (size_t i = 12; i < special.size(); ++i) {
    CAPTURE(special[i]);
    CHECK(std::abs(s[i] - exact_gelu(special[i])) <= 1e-7 * std::abs(special[i]));
  }
}

TEST_CASE("x86 AVX-512 table GELU against std::erf: a dense sweep and special values") {
  if (x86_detect_isa() < X86Isa::kAvx512) {
    MESSAGE("AVX-512 table GELU skipped: this CPU has no AVX-512");
    return;
  }
  check_table("AVX-512", x86::gelu_erf_table_avx512, x86::half_erf_table_avx512, 3.0 / 16.0, 32);
}

TEST_CASE("x86 AVX2 table GELU against std::erf: a dense sweep and special values") {
  if (x86_detect_isa() < X86Isa::kAvx2) {
    MESSAGE("AVX2 table GELU skipped: this CPU has no AVX2 + FMA");
    return;
  }
  check_table("AVX2", x86::gelu_erf_table_avx2, x86::half_erf_table_avx2, 7.0 / 8.0, 8);
}

}  // namespace
}  // namespace test
}  // namespace vitrt
