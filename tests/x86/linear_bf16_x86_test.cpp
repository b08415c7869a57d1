// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The cpu backend's Linear at session precision bf16 (gemm_linear.cpp on the AVX512-BF16 packed GEMM,
// docs/architecture.md §7.1) against the op in double on the operands rounded to bf16 as the kernel rounds
// them (x and W to nearest even; bias and residual fp32): then only the fp32 sums differ, each output by at
// most (K + 2)·2^-24 times the sum of its terms' magnitudes (the bound of a recursive fp32 sum, fused or
// not). The shapes cover both task orders of the kernel: more rows than columns (threads split the rows) and
// fewer (threads split the panels), there with A in one row chunk and in several (K = 1000: a chunk holds 9
// row tiles of 14, so 200 rows make 2 chunks; the rows of each chunk are rounded once per thread and must be
// the rows each task reads), odd K (a half-empty last pair), a partial last panel, every activation with a
// residual; at 1, 2 and 3 threads. The bf16 output must also differ from the fp32 kernel's (the bf16 GEMM
// ran). Skipped, saying so, without AVX512-BF16.
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

struct LinearShape {
  int64_t b, rows, k, n;
  Activation act;
  bool bias, residual;  // a residual only with a bias (the op's inputs are positional)
};

double act_of(Activation a, double x) {
  if (a == Activation::kRelu) return x > 0 ? x : 0;
  if (a == Activation::kGeluErf) return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (a == Activation::kGeluTanh)
    return 0.5 * x * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  return x;
}

HostTensor run_linear(Backend& be, const LinearAttrs& a, const std::vector<HostTensor>& in, int threads,
                      const std::string& name) {
  std::vector<const HostTensor*> ptrs;
  std::vector<bool> constant;
  for (size_t i = 0; i < in.size(); ++i) {
    ptrs.push_back(&in[i]);
    constant.push_back(i == 1 || i == 2);  // weight and bias
  }
  ThreadedOpRunner r;
  Status st = r.plan(be, OpType::kLinear, a, ptrs, constant, threads, name);
  REQUIRE_MESSAGE(st.ok(), st.message());
  HostTensor out;
  st = r.run(ptrs, &out);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return out;
}

TEST_CASE("x86 Linear in bf16: the op in double on bf16-rounded operands, up to fp32 sums") {
  if (!(x86_has_avx512_bf16() && x86_detect_isa() >= X86Isa::kAvx512)) {
    MESSAGE("bf16 Linear skipped: this CPU has no AVX512-BF16 (or no AVX-512)");
    return;
  }
  std::mt19937 rng(2626);
  const LinearShape shapes[] = {
      {8, 49, 1000, 300, Activation::kNone, true, true},       // fewer rows than columns, 2 row chunks
      {2, 100, 1001, 517, Activation::kGeluErf, true, false},  // the same with odd K, a partial panel
      {1, 13, 64, 200, Activation::kRelu, false, false},       // one chunk, one row tile, no bias
      {4, 197, 65, 96, Activation::kNone, true, true},         // more rows than columns: rows split
      {3, 7, 1, 5, Activation::kGeluTanh, true, false},        // K = 1: one half-empty pair
  };
  X86Options o;
  o.max_isa = X86Isa::kAvx512;
  o.read_env = false;
  auto fp32 = create_x86_backend(o);
  o.bf16 = true;
  auto bf16 = create_x86_backend(o);
  for (const LinearShape& s : shapes) {
    const std::string name = "linear_bf16 " + std::to_string(s.b) + "x" + std::to_string(s.rows) + "x" +
                             std::to_string(s.k) + " -> " + std::to_string(s.n);
    CAPTURE(name);
    std::vector<HostTensor> in = {random_tensor(Shape{s.b, s.rows, s.k}, rng),
                                  random_tensor(Shape{s.n, s.k}, rng, 1.0f / std::sqrt(float(s.k)))};
    if (s.bias) in.push_back(random_tensor(Shape{s.n}, rng, 0.5f));
    if (s.residual) in.push_back(random_tensor(Shape{s.b, s.rows, s.n}, rng));  // after a bias (slot 3)
    const bool has_bias = s.bias, has_res = s.residual;
    LinearAttrs a;
    a.activation = s.act;
    const std::vector<float>&x = in[0].data, &w = in[1].data;
    auto r = [](float v) { return double(x86::bf16_to_float(x86::bf16_round(v))); };
    const int64_t m = s.b * s.rows;
    std::vector<double> want(static_cast<size_t>(m * s.n)), slack(want.size());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double acc = has_bias ? in[2].data[j] : 0.0, mag = std::fabs(acc);
        for (int64_t t = 0; t < s.k; ++t) {
          const double term = r(x[i * s.k + t]) * r(w[j * s.k + t]);
          acc += term;
          mag += std::fabs(term);
        }
        // The activation's slope is within [-0.13, 1.13] (ReLU, GELU): it carries the sum's error at
        // most 1.13x.
        double v = act_of(s.act, acc);
        if (has_res) v += in[3].data[i * s.n + j];
        want[i * s.n + j] = v;
        slack[i * s.n + j] = 1.13 * (s.k + 2) * std::ldexp(mag, -24) + 4 * std::ldexp(std::fabs(v), -24);
      }
    const HostTensor f = run_linear(*fp32, a, in, 2, name);
    for (int threads : {1, 2, 3}) {
      const HostTensor got = run_linear(*bf16, a, in, threads, name);
      REQUIRE(got.data.size() == want.size());
      int64_t bad = 0;
      double worst = 0, from_fp32 = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        const double d = std::fabs(got.data[i] - want[i]);
        if (!(d <= slack[i])) ++bad;
        worst = std::isnan(d) ? INFINITY : std::fmax(worst, d / slack[i]);
        from_fp32 = std::fmax(from_fp32, std::fabs(got.data[i] - f.data[i]));
      }
      MESSAGE(name, " (", threads, " threads): largest error ", worst, " of its fp32-sum bound; ", bad,
              " outputs past it");
      CHECK(bad == 0);
      CHECK(from_fp32 > 0);  // the bf16 GEMM ran
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace vitrt
