// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SOFT's LinearAttention and LaViT's ReusedAttention at session precision bf16 (docs/architecture.md §7.1)
// against the reference kernels, on AVX512-BF16 only (skipped, saying so, elsewhere), at 1 and 2 threads.
//  * ReusedAttention rounds Ψ and T = S_prev·Θᵀ + θ_b to bf16 for S = Ψ·T + ψ_b: each of S's N terms is off
//    by at most 2^-8 of |Ψ|·|T| (two roundings of 2^-9), so S by about 2^-8·sqrt(N)·max|Ψ|·max|T| (random
//    signs; 2^-7 allows twice that), which moves each softmax weight by that much relative and the output by
//    at most twice that times max|V|. T is computed here in double from the inputs. And, tighter, against the
//    same op in double with Ψ and T rounded to bf16 first (bf16_round): then only the fp32 sums and the few T
//    that round the other way from the kernel's fp32 T are left, 1e-3 of max|V|.
//  * LinearAttention rounds K1 (a Gaussian kernel, 0 < K1 <= 1) and W = K2⁺·(K1ᵀ·V) for X = K1·W: X is off by
//    about 2^-8·sqrt(m)·max|W|. W is internal, so the bound is taken on the output: 2^-6 of its largest value
//    (m = 12..49 landmarks here; the errors measured are printed), and the bf16 output must differ from the
//    fp32 kernel's (the bf16 path ran). A wrong pair layout is off by the size of the output itself.
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

bool bf16_runs() {
  if (x86_has_avx512_bf16() && x86_detect_isa() >= X86Isa::kAvx512) return true;
  MESSAGE("bf16 kernels skipped: this CPU has no AVX512-BF16 (or no AVX-512)");
  return false;
}

std::unique_ptr<Backend> make_x86_bf16(bool bf16) {
  X86Options o;
  o.max_isa = X86Isa::kAvx512;
  o.read_env = false;
  o.bf16 = bf16;
  return create_x86_backend(o);
}

double max_abs(const std::vector<float>& a) {
  double m = 0;
  for (float x : a) m = std::fmax(m, std::fabs(x));
  return m;
}

// Largest |a - b|; NaN (an unwritten, poisoned element) gives NaN, which fails every bound.
double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (std::isnan(e)) return NAN;
    m = std::fmax(m, e);
  }
  return m;
}

HostTensor run_op(Backend& be, OpType type, const OpAttrs& attrs, const std::vector<HostTensor>& in,
                  const std::vector<bool>& constant, int threads, const std::string& name) {
  std::vector<const HostTensor*> ptrs;
  for (const auto& t : in) ptrs.push_back(&t);
  ThreadedOpRunner r;
  Status st = r.plan(be, type, attrs, ptrs, constant, threads, name);
  REQUIRE_MESSAGE(st.ok(), st.message());
  HostTensor out;
  st = r.run(ptrs, &out);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return out;
}

TEST_CASE("x86 ReusedAttention in bf16: within the bf16 bound of the reference") {
  if (!bf16_runs()) return;
  std::mt19937 rng(77);
  struct Shape4 {
    int64_t b, h, n, nk, d;
  };
  // LaViT stages 2-4 and odd sizes (an odd N: the last pair half empty; columns off the tile widths).
  for (const Shape4& s : {Shape4{2, 2, 784, 49, 64}, Shape4{1, 5, 196, 49, 64}, Shape4{2, 8, 49, 49, 64},
                          Shape4{3, 3, 37, 9, 9}, Shape4{5, 7, 37, 23, 17}}) {
    const std::string name = "la_b" + std::to_string(s.b) + "_h" + std::to_string(s.h) + "_" +
                             std::to_string(s.n) + "x" + std::to_string(s.nk);
    CAPTURE(name);
    std::vector<HostTensor> in = {
        random_tensor(Shape{s.b, s.h, s.n, s.nk}, rng, 2.0f),
        random_tensor(Shape{s.b, s.nk, s.h * s.d}, rng),
        random_tensor(Shape{s.nk, s.nk}, rng, 1.0f / std::sqrt(static_cast<float>(s.nk))),
        random_tensor(Shape{s.nk}, rng, 0.5f),
        random_tensor(Shape{s.n, s.n}, rng, 1.0f / std::sqrt(static_cast<float>(s.n))),
        random_tensor(Shape{s.n}, rng, 0.5f)};
    const std::vector<bool> constant = {false, false, true, true, true, true};
    const OpAttrs attrs = ReusedAttentionAttrs{static_cast<int32_t>(s.h)};
    auto ref = create_reference_backend();
    const HostTensor want = run_op(*ref, OpType::kReusedAttention, attrs, in, constant, 1, name);
    // T = S_prev·Θᵀ + θ_b in double, and its largest magnitude.
    const std::vector<float>&prev = in[0].data, &theta = in[2].data, &theta_b = in[3].data;
    const std::vector<float>&psi = in[4].data, &psi_b = in[5].data, &v = in[1].data;
    std::vector<double> t_all(static_cast<size_t>(s.b * s.h * s.n * s.nk));
    double max_t = 0;
    for (int64_t row = 0; row < s.b * s.h * s.n; ++row)
      for (int64_t j = 0; j < s.nk; ++j) {
        double t = theta_b[j];
        for (int64_t k = 0; k < s.nk; ++k)
          t += static_cast<double>(prev[row * s.nk + k]) * theta[j * s.nk + k];
        t_all[row * s.nk + j] = t;
        max_t = std::fmax(max_t, std::fabs(t));
      }
    // The op in double with Ψ and T rounded to bf16: out[b, i, h·d + c] = Σ_j softmax_j(S[b, h, i, :])·V[b,
    // j, h·d + c].
    auto bf16 = [](double x) {
      return static_cast<double>(x86::bf16_to_float(x86::bf16_round(static_cast<float>(x))));
    };
    std::vector<double> rounded(static_cast<size_t>(s.b * s.n * s.h * s.d));
    std::vector<double> srow(static_cast<size_t>(s.nk));
    for (int64_t b = 0; b < s.b; ++b)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t i = 0; i < s.n; ++i) {
          double mx = -INFINITY;
          for (int64_t j = 0; j < s.nk; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < s.n; ++k)
              acc += bf16(psi[i * s.n + k]) * bf16(t_all[((b * s.h + h) * s.n + k) * s.nk + j]);
            srow[j] = acc + psi_b[i];
            mx = std::fmax(mx, srow[j]);
          }
          double z = 0;
          for (int64_t j = 0; j < s.nk; ++j) z += srow[j] = std::exp(srow[j] - mx);
          for (int64_t c = 0; c < s.d; ++c) {
            double o = 0;
            for (int64_t j = 0; j < s.nk; ++j) o += srow[j] * v[(b * s.nk + j) * s.h * s.d + h * s.d + c];
            rounded[(b * s.n + i) * s.h * s.d + h * s.d + c] = o / z;
          }
        }
    const double tight = 1e-3 * max_abs(v);
    const double tol = 2 * std::ldexp(1.0, -7) * std::sqrt(static_cast<double>(s.n)) * max_abs(in[4].data) *
                       max_t * max_abs(in[1].data);
    auto fp32 = make_x86_bf16(false);
    const HostTensor f = run_op(*fp32, OpType::kReusedAttention, attrs, in, constant, 2, name);
    auto be = make_x86_bf16(true);
    for (int threads : {1, 2}) {
      const HostTensor got = run_op(*be, OpType::kReusedAttention, attrs, in, constant, threads, name);
      REQUIRE(got.shape == want.shape);
      const double e = max_diff(got.data, want.data);
      MESSAGE(name, " (", threads, " threads): bf16 max |x86 - ref| ", e, ", bound ", tol);
      CHECK(e <= tol);
      CHECK(max_diff(got.data, f.data) > 0);  // the bf16 product ran
      double er = 0;
      for (size_t q = 0; q < rounded.size(); ++q) er = std::fmax(er, std::fabs(got.data[q] - rounded[q]));
      MESSAGE(name, " (", threads, " threads): max |x86 - rounded operands in double| ", er, ", bound ",
              tight);
      CHECK(er <= tight);
    }
  }
}

TEST_CASE("x86 LinearAttention (SOFT) in bf16: within 2^-6 of the reference's output scale") {
  if (!bf16_runs()) return;
  std::mt19937 rng(91);
  struct Spec {
    int64_t batch, height, width, heads, d, r, k;
    PseudoInverse pinv;
    bool sym;
  };
  // SOFT-Tiny's stage 1 (56², r = 8: m = 49) and stage 3 shapes, odd grids (m = 12, 20: odd pair counts).
  const Spec specs[] = {{1, 56, 56, 2, 32, 8, 9, PseudoInverse::kNewtonLegacy, true},
                        {2, 14, 14, 10, 32, 2, 3, PseudoInverse::kNewtonScaled, false},
                        {2, 13, 11, 3, 16, 3, 3, PseudoInverse::kNewtonScaled, false},
                        {3, 17, 30, 2, 48, 4, 9, PseudoInverse::kNewtonScaled, true}};
  for (const Spec& s : specs) {
    const std::string name = "soft_" + std::to_string(s.height) + "x" + std::to_string(s.width) + "_h" +
                             std::to_string(s.heads) + "_r" + std::to_string(s.r);
    CAPTURE(name);
    const int64_t n = s.height * s.width, c = s.heads * s.d;
    std::vector<HostTensor> in;
    in.push_back(random_tensor(Shape{s.batch, n, c}, rng));
    in.push_back(random_tensor(Shape{s.batch, n, c}, rng));
    in.push_back(
        random_tensor(Shape{s.d, s.d, s.r, s.r}, rng, 1.0f / std::sqrt(static_cast<float>(s.d * s.r * s.r))));
    in.push_back(random_tensor(Shape{s.d}, rng, 0.1f, 1.0f));
    in.push_back(random_tensor(Shape{s.d}, rng, 0.1f));
    in.push_back(random_tensor(Shape{s.heads, 1, s.k, s.k}, rng, 1.0f / static_cast<float>(s.k)));
    const std::vector<bool> constant = {false, false, true, true, true, true};
    LinearAttentionAttrs a;
    a.num_heads = static_cast<int32_t>(s.heads);
    a.height = static_cast<int32_t>(s.height);
    a.width = static_cast<int32_t>(s.width);
    a.q_scale = std::pow(static_cast<float>(s.d), -0.25f);
    a.landmark_ratio = static_cast<int32_t>(s.r);
    a.pinv = s.pinv;
    a.newton_iterations = 20;
    a.newton_regularizer = 0.01f;
    a.symmetric_normalization = s.sym;
    auto ref = create_reference_backend();
    const HostTensor want = run_op(*ref, OpType::kLinearAttention, a, in, constant, 1, name);
    const double tol = std::ldexp(1.0, -6) * std::fmax(1.0, max_abs(want.data));
    auto fp32 = make_x86_bf16(false);
    const HostTensor f = run_op(*fp32, OpType::kLinearAttention, a, in, constant, 2, name);
    auto be = make_x86_bf16(true);
    for (int threads : {1, 2}) {
      const HostTensor got = run_op(*be, OpType::kLinearAttention, a, in, constant, threads, name);
      REQUIRE(got.shape == want.shape);
      const double e = max_diff(got.data, want.data);
      MESSAGE(name, " (", threads, " threads): bf16 max |x86 - ref| ", e, ", bound ", tol, " (fp32 kernel ",
              max_diff(f.data, want.data), ")");
      CHECK(e <= tol);
      CHECK(max_diff(got.data, f.data) > 0);  // the bf16 product ran
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace vitrt
