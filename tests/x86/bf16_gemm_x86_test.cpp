// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The AVX512-BF16 packed GEMM (packed_gemm_bf16.h), every tile, on M, N, K in {1, 7, 33, 197, 768}:
//  * against a double product of the operands rounded to bf16 (bf16_round): only the fp32 summation differs,
//    so the layout of the pairs, the odd-K padding and the tail masks are checked to fp32 accuracy;
//  * against the fp32 product, with the tolerance bf16 itself allows: each operand is off by at most 2^-8
//    relative (8 significant bits, round to nearest), so a product by 2^-7, and K independent roundings add
//    up like a random walk: |error| <= 2^-7 · sqrt(K) · max|a| · max|b| (3 standard deviations and more).
// C sits inside a NaN-poisoned buffer (every element written, nothing outside it touched), with the
// epilogues (column bias, activation, residual) in the first check. Skipped, saying so, without AVX512-BF16.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace test {
namespace {

using x86::GemmAct;
using x86::GemmKernels;

double act_ref(GemmAct act, double x) {
  switch (act) {
    case GemmAct::kRelu:
      return x > 0 ? x : 0;
    case GemmAct::kGeluErf:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case GemmAct::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    default:
      return x;
  }
}

double bf16(float x) {
  return x86::bf16_to_float(x86::bf16_round(x));
}

struct Result {
  int exact_bad = 0, bf16_bad = 0, touched = 0;
  double worst_exact = 0, worst_bf16 = 0;  // error / tolerance
};

// C = act(A·Wᵀ + bias) + residual through gemm_bf16_pack_rows, gemm_bf16_pack_transposed and
// gemm_packed_product, checked both ways.
Result check(const GemmKernels& g, int64_t m, int64_t n, int64_t k, GemmAct act, bool bias, bool residual,
             std::mt19937& rng) {
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> a(m * k), w(n * k), bc(n), r(m * n);
  for (float& v : a) v = d(rng);
  for (float& v : w) v = d(rng) / std::sqrt(static_cast<float>(k));
  for (float& v : bc) v = d(rng);
  for (float& v : r) v = d(rng);
  std::vector<double> a16(a.size()), w16(w.size());  // the operands as the kernel sees them
  for (size_t i = 0; i < a.size(); ++i) a16[i] = bf16(a[i]);
  for (size_t i = 0; i < w.size(); ++i) w16[i] = bf16(w[i]);
  double amax = 0, wmax = 0;
  for (float v : a) amax = std::max(amax, static_cast<double>(std::fabs(v)));
  for (float v : w) wmax = std::max(wmax, static_cast<double>(std::fabs(v)));
  const int64_t kp = x86::gemm_bf16_pairs(k), panels = x86::gemm_panels(n, g.nr);
  x86::AlignedFloats packed(static_cast<size_t>(x86::gemm_packed_floats(n, kp, g.nr)));
  x86::gemm_bf16_pack_transposed(w.data(), n, k, g.nr, packed.data());
  // A's pairs in rows one pair longer than needed, poisoned: the kernel must read only kp pairs a row.
  const int64_t lda = kp + 1;
  x86::AlignedFloats pairs(static_cast<size_t>(m * lda));
  std::fill(pairs.data(), pairs.data() + m * lda, std::nanf(""));
  x86::gemm_bf16_pack_rows(a.data(), k, m, k, pairs.data(), lda);
  x86::AlignedFloats bias_pad(static_cast<size_t>(panels * g.nr));
  for (int64_t j = 0; j < n; ++j) bias_pad.data()[j] = bc[j];
  const int64_t ldc = n + 3;
  std::vector<float> cbuf((m + 2) * ldc, std::nanf(""));
  float* c = cbuf.data() + ldc + 1;
  x86::GemmEpilogue e;
  e.bias_cols = bias ? bias_pad.data() : nullptr;
  e.act = act;
  e.residual = residual ? r.data() : nullptr;
  e.ldr = n;
  x86::gemm_packed_product(&g, pairs.data(), lda, m, kp, packed.data(), n, c, ldc, e);

  Result res;
  const double bf16_tol = std::ldexp(1.0, -7) * std::sqrt(static_cast<double>(k)) * amax * wmax;
  for (int64_t i = -1; i <= m; ++i)
    for (int64_t j = -1; j < n + 2; ++j) {
      const float got = c[i * ldc + j];
      if (i < 0 || i >= m || j < 0 || j >= n) {
        res.touched += !std::isnan(got);
        continue;
      }
      double exact = bias ? bc[j] : 0.0, full = exact, mag = std::fabs(exact);
      for (int64_t t = 0; t < k; ++t) {
        const double ab = a16[i * k + t] * w16[j * k + t];
        exact += ab;
        mag += std::fabs(ab);
        full += static_cast<double>(a[i * k + t]) * w[j * k + t];
      }
      const double extra = residual ? r[i * n + j] : 0.0;
      const double want_exact = act_ref(act, exact) + extra, want_full = act_ref(act, full) + extra;
      // fp32 sums of bf16 products (exact in fp32) and the epilogue's few ulps.
      const double exact_tol =
          4e-7 * std::sqrt(static_cast<double>(k) + 1) * (mag + 1) + 1e-6 * std::fabs(want_exact);
      const double err_exact = std::fabs(got - want_exact), err_full = std::fabs(got - want_full);
      // GELU and ReLU have slopes within [-0.13, 1.13]: the bf16 error passes through about unchanged.
      const double full_tol = 1.2 * bf16_tol + exact_tol;
      res.worst_exact = std::max(res.worst_exact, err_exact / exact_tol);
      res.worst_bf16 = std::max(res.worst_bf16, err_full / full_tol);
      if (!(err_exact <= exact_tol) && res.exact_bad++ < 3)
        MESSAGE("C[", i, ", ", j, "] = ", got, ", want ", want_exact, " from the bf16 operands (tolerance ",
                exact_tol, ")");
      if (!(err_full <= full_tol) && res.bf16_bad++ < 3)
        MESSAGE("C[", i, ", ", j, "] = ", got, ", want ", want_full, " in fp32 (bf16 tolerance ", full_tol,
                ")");
    }
  return res;
}

TEST_CASE("bf16 rounding is round to nearest even, with the hardware's denormals and NaNs") {
  CHECK(x86::bf16_round(1.0f) == 0x3f80);
  CHECK(x86::bf16_round(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);      // a tie: to even (down)
  CHECK(x86::bf16_round(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);  // a tie: to even (up)
  CHECK(x86::bf16_round(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3f81);  // above the tie
  CHECK(x86::bf16_round(-2.5f) == 0xc020);
  CHECK(x86::bf16_round(std::ldexp(1.0f, -130)) == 0);  // denormal: flushed
  CHECK(x86::bf16_round(3.4e38f) == 0x7f80);            // past the largest bf16: infinity
  CHECK((x86::bf16_round(std::nanf("")) & 0x7fc0) == 0x7fc0);
}

// M, N, K in {1, 7, 33, 197, 768} through one kernel, the epilogues varied with the shape; returns the cases
// checked and raises *worst_exact and *worst_bf16 (error / tolerance) to the worst seen.
int check_all_shapes(const GemmKernels& g, std::mt19937& rng, double* worst_exact, double* worst_bf16) {
  const int64_t sizes[] = {1, 7, 33, 197, 768};
  const GemmAct acts[] = {GemmAct::kNone, GemmAct::kRelu, GemmAct::kGeluErf, GemmAct::kGeluTanh};
  int cases = 0;
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : sizes) {
        if (m * n * k > 30'000'000) continue;  // the double reference's time, not the kernel's limits
        ++cases;
        CAPTURE(g.name);
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        const GemmAct act = acts[cases % 4];
        CAPTURE(static_cast<int>(act));
        const Result r = check(g, m, n, k, act, cases % 2 == 0, cases % 3 != 2, rng);
        CHECK(r.exact_bad == 0);
        CHECK(r.bf16_bad == 0);
        CHECK(r.touched == 0);
        *worst_exact = std::max(*worst_exact, r.worst_exact);
        *worst_bf16 = std::max(*worst_bf16, r.worst_bf16);
      }
  return cases;
}

// check_all_shapes over `kernels`, then the summary, and that the bf16 tolerance is not so loose that
// anything passes: the error uses a real share of it.
void sweep(const std::vector<const GemmKernels*>& kernels, unsigned seed) {
  std::mt19937 rng(seed);
  int cases = 0;
  double worst_exact = 0, worst_bf16 = 0;
  for (const GemmKernels* g : kernels) cases += check_all_shapes(*g, rng, &worst_exact, &worst_bf16);
  const std::string on = std::string(kernels.front()->name) + (kernels.size() > 1 ? " and the others" : "");
  MESSAGE("checked ", cases, " shapes on ", on, "; worst error / tolerance: ", worst_exact,
          " against the bf16 operands, ", worst_bf16, " against fp32");
  CHECK(worst_bf16 > 0.02);
}

TEST_CASE("the bf16 GEMM matches fp32 within bf16's rounding on odd shapes, every tile and epilogue") {
  if (!x86_has_avx512_bf16()) {
    MESSAGE("skipped: this CPU has no AVX512-BF16 (vdpbf16ps)");
    return;
  }
  sweep({x86::gemm_kernels_bf16(0), x86::gemm_kernels_bf16(1), x86::gemm_kernels_bf16(2)}, 2626);
}

// The AMX kernel's tiling (32 × 32 blocks of four C tiles, A rows and K pairs past the operands staged as
// zeros, B tiles read from the 32-pair panels), run on a model of the tile instructions as Intel's manual
// defines them (packed_gemm_amx_model.h), so that it is tested where the CPU has no AMX; the model also
// checks that every tile product is one the hardware would accept.
TEST_CASE("the AMX bf16 GEMM, on a model of the tile instructions, matches fp32 within bf16's rounding") {
  if (!x86_has_avx512_bf16()) {
    MESSAGE("skipped: this CPU has no AVX512-BF16 (the kernel's epilogue and operand rounding use it)");
    return;
  }
  x86::gemm_amx_model_faulted(true);
  sweep({x86::gemm_kernels_amx_model()}, 2627);
  CHECK_FALSE(x86::gemm_amx_model_faulted(true));
}

TEST_CASE("the AMX bf16 GEMM on the CPU's tiles matches fp32 within bf16's rounding") {
  if (!x86_has_amx_bf16()) {
    MESSAGE("skipped: this CPU (or OS) offers no AMX-BF16 tiles");
    return;
  }
  sweep({x86::gemm_kernels_amx()}, 2628);
}

}  // namespace
}  // namespace test
}  // namespace vitrt
