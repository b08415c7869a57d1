// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SoftmaxAttention's bf16 block (attention_bf16.h) against a double-precision softmax(scale·Q·Kᵀ)·V on odd
// shapes: head dims 1, 33 and 64 (odd pairs, a partial vector), 1 to 32 query rows, 1 to 600 keys (600: two
// key blocks and the online rescaling), a head's second query block reusing Kᵀ and V (kt_ready). Tolerance
// from bf16's 8 significant bits: a score is off by about 2^-8·sqrt(d)·|q|·|k|·scale (Q and K rounded), which
// moves each softmax weight by that much relative, and P and V are rounded by 2^-8 each, so
// |error| <= (2^-7·sqrt(d)·max|q|·max|k|·scale + 2^-6)·max|v|. And against the same attention of Q, K and V
// rounded to bf16 first (bf16_round), where only P's rounding is left: each weight off by at most 2^-8
// relative, so |error| <= 2^-8·max|v| (and the pair layout, odd d, odd key counts and the second key block
// are checked that tightly). Skipped, saying so, without AVX512-BF16.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/attention_bf16.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace test {
namespace {

struct Case {
  int64_t nq, nk, d;
};

double bf16(float x) {
  return x86::bf16_to_float(x86::bf16_round(x));
}

// softmax(scale·Q·Kᵀ)·V of row i in double, the operands through `round`.
template <class Round>
void attend(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
            int64_t stride, int64_t nk, int64_t d, float scale, int64_t i, Round round,
            std::vector<double>* p, double* o) {
  double mx = -INFINITY;
  for (int64_t j = 0; j < nk; ++j) {
    double sc = 0;
    for (int64_t t = 0; t < d; ++t) sc += round(q[i * stride + t]) * round(k[j * stride + t]);
    (*p)[j] = sc * scale;
    mx = std::max(mx, (*p)[j]);
  }
  double sum = 0;
  for (int64_t j = 0; j < nk; ++j) sum += (*p)[j] = std::exp((*p)[j] - mx);
  for (int64_t t = 0; t < d; ++t) {
    double acc = 0;
    for (int64_t j = 0; j < nk; ++j) acc += (*p)[j] * round(v[j * stride + t]);
    o[t] = acc / sum;
  }
}

// Runs query blocks [0, nq) of up to 32 rows through one scratch, as the kernel's threads do.
double check(const Case& c, std::mt19937& rng, int* bad) {
  std::normal_distribution<float> dist(0.f, 1.f);
  const int64_t stride = c.d + 3;  // tokens further apart than the head, as in a [N, heads·d] layout
  std::vector<float> q(c.nq * stride), k(c.nk * stride), v(c.nk * stride), out(c.nq * c.d, std::nanf(""));
  for (float& x : q) x = dist(rng);
  for (float& x : k) x = dist(rng);
  for (float& x : v) x = dist(rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
  const int64_t kb = std::min<int64_t>(512, std::max<int64_t>(16, (c.nk + 15) / 16 * 16));
  x86::AlignedFloats scratch(static_cast<size_t>(x86::attn_bf16_scratch_floats(32, kb, c.d)));
  for (int64_t i0 = 0; i0 < c.nq; i0 += 32) {
    x86::AttnBf16Block b;
    b.q = q.data() + i0 * stride;
    b.k = k.data();
    b.v = v.data();
    b.q_stride = b.k_stride = b.v_stride = stride;
    b.nq = std::min<int64_t>(32, c.nq - i0);
    b.nk = c.nk;
    b.d = c.d;
    b.kb = kb;
    b.scale = scale;
    b.out = out.data() + i0 * c.d;
    b.out_stride = c.d;
    b.scratch = scratch.data();
    b.kt_ready = i0 > 0 && c.nk <= kb;
    x86::attention_block_bf16(b);
  }
  double qmax = 0, kmax = 0, vmax = 0;
  for (float x : q) qmax = std::max(qmax, static_cast<double>(std::fabs(x)));
  for (float x : k) kmax = std::max(kmax, static_cast<double>(std::fabs(x)));
  for (float x : v) vmax = std::max(vmax, static_cast<double>(std::fabs(x)));
  const double tol = (std::ldexp(1.0, -7) * std::sqrt(static_cast<double>(c.d)) * qmax * kmax * scale +
                      std::ldexp(1.0, -6)) *
                     vmax;
  const double tol_rounded = std::ldexp(1.0, -8) * vmax + 1e-5;
  double worst = 0;
  std::vector<double> p(c.nk), want(c.d), want_rounded(c.d);
  for (int64_t i = 0; i < c.nq; ++i) {
    attend(
        q, k, v, stride, c.nk, c.d, scale, i, [](float x) { return static_cast<double>(x); }, &p,
        want.data());
    attend(q, k, v, stride, c.nk, c.d, scale, i, bf16, &p, want_rounded.data());
    for (int64_t t = 0; t < c.d; ++t) {
      const double got = out[i * c.d + t];
      const double err = std::fabs(got - want[t]), err_rounded = std::fabs(got - want_rounded[t]);
      worst = std::max(worst, err / tol);
      if (!(err <= tol) && (*bad)++ < 3)
        MESSAGE("out[", i, ", ", t, "] = ", got, ", want ", want[t], " (tolerance ", tol, ")");
      if (!(err_rounded <= tol_rounded) && (*bad)++ < 3)
        MESSAGE("out[", i, ", ", t, "] = ", got, ", want ", want_rounded[t],
                " from bf16 operands (tolerance ", tol_rounded, ")");
    }
  }
  return worst;
}

TEST_CASE("the bf16 attention block matches a double softmax attention within bf16's rounding") {
  if (!x86_has_avx512_bf16()) {
    MESSAGE("skipped: this CPU has no AVX512-BF16 (vdpbf16ps)");
    return;
  }
  const Case cases[] = {{1, 1, 1},    {7, 7, 33},  {33, 197, 64},  {32, 600, 64},
                        {5, 600, 33}, {40, 17, 1}, {197, 197, 64}, {3, 33, 96}};
  std::mt19937 rng(2627);
  double worst = 0;
  for (const Case& c : cases) {
    CAPTURE(c.nq);
    CAPTURE(c.nk);
    CAPTURE(c.d);
    int bad = 0;
    worst = std::max(worst, check(c, rng, &bad));
    CHECK(bad == 0);
  }
  MESSAGE("worst error / tolerance: ", worst);
  CHECK(worst > 0.01);  // bf16 did run: the error uses a real share of the tolerance
}

}  // namespace
}  // namespace test
}  // namespace vitrt
