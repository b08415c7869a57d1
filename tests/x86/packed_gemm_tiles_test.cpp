// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Every register tile of the packed GEMM (packed_gemm.h) called directly, whatever tile gemm_kernels_for
// would pick for a shape, with A in place, packed (gemm_pack_a) and column-major with a stride
// (GemmPanel::a_step, Conv2d's pixel-row form) in row tiles of near-equal height (GemmPanel::even_rows), and
// implicitly through per-k offsets in output rows (GemmPanel::a_offsets, its implicit product): C =
// act(A·Wᵀ + bias) + residual against a double-precision product, on random sizes off the tile (partial row
// tiles, a partial last panel, K across several K blocks), with column and row biases, every activation and a
// residual. C sits inside a larger NaN-poisoned buffer: every element of the block must be written and
// nothing outside it touched. Also the epilogue's vector GELU against erf and tanh over the range where its
// error is largest.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/ref/unary_functions.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/gelu_table.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace test {
namespace {

using x86::GemmAct;
using x86::GemmKernels;
using x86::GemmPanel;

std::vector<const GemmKernels*> tiles_here() {
  std::vector<const GemmKernels*> v;
  const X86Isa top = x86_detect_isa();
  if (top >= X86Isa::kAvx512)
    for (int which = 0; which < 3; ++which) v.push_back(x86::gemm_kernels_avx512(which));
  if (top >= X86Isa::kAvx2) v.push_back(x86::gemm_kernels_avx2());
  return v;
}

double act_ref(GemmAct act, double x) {
  switch (act) {
    case GemmAct::kRelu:
      return x > 0 ? x : 0;
    case GemmAct::kGeluErf:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case GemmAct::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case GemmAct::kSilu:
      return x / (1 + std::exp(-x));
    case GemmAct::kHardSwish:
      return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
    default:
      return x;
  }
}

struct Sizes {
  int64_t m, n, k;
};

// How the panel reads A: row-major in place, packed by gemm_pack_a, column-major with a stride, or
// implicitly through per-k offsets into an "image" (GemmPanel::a_offsets, Conv2d's implicit product).
enum class AForm { kRowMajor, kPacked, kStrided, kImplicit };

// A read implicitly: rows in output rows of `width` (a divisor of m), row i at
// (i / width)·row_stride + (i % width)·lda of the image, k at offsets[k]; the image's other floats NaN.
struct ImplicitA {
  int64_t width = 1, lda = 1, row_stride = 1;
  std::vector<int32_t> offsets;
  std::vector<float> image;
};

ImplicitA implicit_a(const std::vector<float>& a, int64_t m, int64_t k, int64_t width, std::mt19937& rng) {
  ImplicitA x;
  x.width = width;
  x.lda = 1 + static_cast<int64_t>(rng() % 2);
  x.row_stride = width * x.lda + 3;
  // Each k its own block of the image past the rows' span, in a shuffled order: an offset mixed up with
  // another k's reads the wrong numbers, and a wrong row base reads NaN or another row's.
  const int64_t span = (m / width - 1) * x.row_stride + (width - 1) * x.lda + 1;
  std::vector<int32_t> order(static_cast<size_t>(k));
  for (int64_t t = 0; t < k; ++t) order[t] = static_cast<int32_t>(t);
  std::shuffle(order.begin(), order.end(), rng);
  x.offsets.resize(static_cast<size_t>(k));
  for (int64_t t = 0; t < k; ++t) x.offsets[t] = static_cast<int32_t>(order[t] * (span + 2));
  x.image.assign(static_cast<size_t>(k * (span + 2) + 1), std::nanf(""));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t t = 0; t < k; ++t)
      x.image[x.offsets[t] + i / width * x.row_stride + i % width * x.lda] = a[i * k + t];
  return x;
}

void check_tile(const GemmKernels& g, const Sizes& s, GemmAct act, bool bias_cols, bool bias_rows,
                bool residual, bool residual_before_act, AForm form, std::mt19937& rng) {
  const bool a_packed = form == AForm::kPacked, a_strided = form == AForm::kStrided,
             a_implicit = form == AForm::kImplicit;
  CAPTURE(g.name);
  CAPTURE(static_cast<int>(form));
  CAPTURE(s.m);
  CAPTURE(s.n);
  CAPTURE(s.k);
  CAPTURE(static_cast<int>(act));
  CAPTURE(bias_cols);
  CAPTURE(bias_rows);
  CAPTURE(residual);
  CAPTURE(residual_before_act);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> a(s.m * s.k), w(s.n * s.k), bc(s.n), br(s.m), r(s.m * s.n);
  for (float& v : a) v = d(rng);
  for (float& v : w) v = d(rng) / std::sqrt(static_cast<float>(s.k + 1));
  for (float& v : bc) v = d(rng);
  for (float& v : br) v = d(rng);
  for (float& v : r) v = d(rng);
  const int64_t panels = x86::gemm_panels(s.n, g.nr);
  x86::AlignedFloats packed(static_cast<size_t>(x86::gemm_packed_floats(s.n, s.k, g.nr)));
  x86::gemm_pack_transposed(w.data(), s.n, s.k, g.nr, packed.data());
  // A in gemm_pack_a's row tiles, NaN-poisoned first: a float a tile reads that the pack did not write shows.
  x86::AlignedFloats a_tiles(static_cast<size_t>(x86::gemm_packed_a_floats(s.m, s.k, g.mr)));
  std::fill(a_tiles.data(), a_tiles.data() + a_tiles.size(), std::nanf(""));
  x86::gemm_pack_a(a.data(), s.k, s.m, s.k, g.mr, a_tiles.data());
  // A column by column, lda_t floats apart (NaN in the gap past row m): A[i, kk] at kk·lda_t + i.
  const int64_t lda_t = s.m + 5;
  std::vector<float> a_t(static_cast<size_t>(std::max<int64_t>(s.k, 1) * lda_t), std::nanf(""));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t kk = 0; kk < s.k; ++kk) a_t[kk * lda_t + i] = a[i * s.k + kk];
  // Implicit: output rows of the whole m, of half of it, or of one row, by turns.
  const int64_t width = s.m % 3 == 0 ? s.m : s.m % 2 == 0 ? s.m / 2 : s.k % 2 == 0 ? s.m : 1;
  const ImplicitA ia = a_implicit ? implicit_a(a, s.m, s.k, width, rng) : ImplicitA{};
  x86::AlignedFloats bias_pad(static_cast<size_t>(panels * g.nr));
  for (int64_t j = 0; j < panels * g.nr; ++j) bias_pad.data()[j] = j < s.n ? bc[j] : 0.f;
  // C: m × n inside an (m + 2) × (n + 3) buffer, offset by one row and one column.
  const int64_t ldc = s.n + 3;
  std::vector<float> cbuf((s.m + 2) * ldc, std::nanf(""));
  float* c = cbuf.data() + ldc + 1;
  // With A packed, rows past the first row tile go in a second call (GemmPanel::a_row0), as Conv2d's row
  // chunks do; strided, the rows are cut in two halves (any row count); implicit, at whole output rows.
  const int64_t out_rows = s.m / width;
  const int64_t split = a_packed && s.m > g.mr       ? g.mr
                        : a_strided && s.m > 1       ? (s.m + 1) / 2
                        : a_implicit && out_rows > 1 ? (out_rows + 1) / 2 * width
                                                     : s.m;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t r0 = 0; r0 < s.m; r0 = r0 == 0 ? split : s.m) {
      const int64_t r1 = r0 == 0 ? split : s.m;
      GemmPanel gp;
      gp.a = a_packed ? a_tiles.data() : a_strided ? a_t.data() + r0 : a.data() + r0 * s.k;
      gp.lda = a_packed ? 0 : a_strided ? 1 : s.k;
      gp.a_packed = a_packed;
      gp.a_step = a_strided ? lda_t : 0;
      gp.even_rows = a_strided;
      if (a_implicit) {
        gp.a = ia.image.data() + r0 / width * ia.row_stride;
        gp.lda = ia.lda;
        gp.a_offsets = ia.offsets.data();
        gp.a_row_width = width;
        gp.a_row_stride = ia.row_stride;
      }
      gp.a_rows = x86::gemm_packed_a_rows(s.m, g.mr);
      gp.a_row0 = r0;
      gp.m = r1 - r0;
      gp.k = s.k;
      gp.b = packed.data() + p * s.k * g.nr;
      gp.cols = std::min<int64_t>(g.nr, s.n - p * g.nr);
      gp.c = c + r0 * ldc + p * g.nr;
      gp.ldc = ldc;
      gp.bias_cols = bias_cols ? bias_pad.data() + p * g.nr : nullptr;
      gp.bias_rows = bias_rows ? br.data() + r0 : nullptr;
      gp.act = act;
      if (residual) {
        gp.residual = r.data() + r0 * s.n + p * g.nr;
        gp.ldr = s.n;
        gp.residual_before_act = residual_before_act;
      }
      g.panel(gp);
    }
  int bad = 0, touched = 0;
  for (int64_t i = -1; i <= s.m; ++i)
    for (int64_t j = -1; j < s.n + 2; ++j) {
      const float got = c[i * ldc + j];
      if (i < 0 || i >= s.m || j < 0 || j >= s.n) {
        touched += !std::isnan(got);
        continue;
      }
      double acc = (bias_cols ? bc[j] : 0.0) + (bias_rows ? br[i] : 0.0), mag = std::fabs(acc);
      for (int64_t kk = 0; kk < s.k; ++kk) {
        acc += static_cast<double>(a[i * s.k + kk]) * w[j * s.k + kk];
        mag += std::fabs(static_cast<double>(a[i * s.k + kk]) * w[j * s.k + kk]);
      }
      const double res = residual ? r[i * s.n + j] : 0.0;
      const double want = residual_before_act ? act_ref(act, acc + res) : act_ref(act, acc) + res;
      mag += std::fabs(res);
      // float32 accumulation error grows with k and the sum of magnitudes; the GELU adds a few ulps.
      const double tol = 4e-7 * std::sqrt(static_cast<double>(s.k) + 1) * (mag + 1) + 1e-6 * std::fabs(want);
      if (!(std::fabs(got - want) <= tol) && bad++ < 3)
        MESSAGE("C[", i, ", ", j, "] = ", got, ", want ", want, " (tolerance ", tol, ")");
    }
  CHECK(bad == 0);
  CHECK(touched == 0);
}

TEST_CASE("every packed GEMM tile matches a double product on odd sizes, epilogues included") {
  const auto tiles = tiles_here();
  if (tiles.empty()) {
    MESSAGE("no AVX2 here: skipped");
    return;
  }
  std::mt19937 rng(4242);
  std::uniform_int_distribution<int64_t> dm(1, 40), dn(1, 150), dk(1, 500);
  const GemmAct acts[] = {GemmAct::kNone,     GemmAct::kRelu, GemmAct::kGeluErf,
                          GemmAct::kGeluTanh, GemmAct::kSilu, GemmAct::kHardSwish};
  int cases = 0;
  for (const GemmKernels* g : tiles) {
    // Exact tile multiples, one past, K = 0 (bias only), K across 1..3 blocks, then random.
    std::vector<Sizes> sizes = {{g->mr, g->nr, 16}, {g->mr + 1, g->nr + 1, 193},
                                {3, 5, 0},          {2 * g->mr - 1, 2 * g->nr - 3, 385},
                                {1, 1, 1},          {17, 64, 192}};
    for (int i = 0; i < 6; ++i) sizes.push_back({dm(rng), dn(rng), dk(rng)});
    for (size_t i = 0; i < sizes.size(); ++i)
      for (AForm form : {AForm::kRowMajor, AForm::kPacked, AForm::kStrided, AForm::kImplicit}) {
        check_tile(*g, sizes[i], acts[i % std::size(acts)], i % 2 == 0, i % 3 == 1, i % 3 != 2, i % 4 >= 2,
                   form, rng);
        ++cases;
      }
  }
  MESSAGE("checked ", cases, " tile cases over ", tiles.size(), " tiles");
}

// A panel of no rows (m = 0) with k > 0 stores nothing and returns: no callers send one today, but the tile's
// prefetch spreading once divided by the number of row tiles, which is 0 there.
TEST_CASE("a packed GEMM panel with no rows writes nothing") {
  for (const GemmKernels* g : tiles_here()) {
    CAPTURE(g->name);
    const int64_t k = 8;
    x86::AlignedFloats b(static_cast<size_t>(k * g->nr));
    std::fill(b.data(), b.data() + b.size(), 1.f);
    std::vector<float> a(k, 1.f), c(static_cast<size_t>(g->nr), std::nanf(""));
    GemmPanel gp;
    gp.a = a.data();
    gp.lda = k;
    gp.m = 0;
    gp.k = k;
    gp.b = b.data();
    gp.cols = g->nr;
    gp.c = c.data();
    gp.ldc = g->nr;
    g->panel(gp);
    CHECK(std::all_of(c.begin(), c.end(), [](float v) { return std::isnan(v); }));
  }
}

// C = act(a·1) over a dense sweep of a: the epilogue GELU's error (erf: the ISA's table GELU, which it must
// equal bit for bit: gelu_table_avx512.h, gelu_table_avx2.h) against erf and tanh in double. PyTorch's own
// float32 GELU on the same sweep is off by up to 3.6e-7 (erf) and 3.9e-7 (tanh) absolute, and by 2.8e-6
// and 5.9e-7 relative where |gelu| > 0.05; relative errors are only bounded away from the far negative tail,
// where 1 + erf cancels in every float implementation.
TEST_CASE("the GEMM epilogue's vector GELU is within a few ulps of erf and tanh") {
  const auto tiles = tiles_here();
  if (tiles.empty()) return;
  std::vector<float> x;
  for (float v = -16.f; v <= 16.f; v += 1.f / 128) x.push_back(v);
  for (float v : {-90.f, -88.f, -40.f, 40.f, 88.f, 90.f, 1e-20f, -1e-20f, 0.f}) x.push_back(v);
  const int64_t m = static_cast<int64_t>(x.size());
  for (const GemmKernels* g : tiles) {
    x86::AlignedFloats packed(static_cast<size_t>(x86::gemm_packed_floats(1, 1, g->nr)));
    const float one = 1.f;
    x86::gemm_pack_transposed(&one, 1, 1, g->nr, packed.data());
    for (GemmAct act : {GemmAct::kGeluErf, GemmAct::kGeluTanh}) {
      CAPTURE(g->name);
      CAPTURE(static_cast<int>(act));
      std::vector<float> c(m, std::nanf(""));
      GemmPanel gp;
      gp.a = x.data();
      gp.lda = 1;
      gp.m = m;
      gp.k = 1;
      gp.b = packed.data();
      gp.cols = 1;
      gp.c = c.data();
      gp.ldc = 1;
      gp.act = act;
      g->panel(gp);
      double worst_abs = 0, worst_rel = 0;
      for (int64_t i = 0; i < m; ++i) {
        const double want = act_ref(act, x[i]), err = std::fabs(c[i] - want);
        worst_abs = std::max(worst_abs, err);
        if (std::fabs(want) > 0.05) worst_rel = std::max(worst_rel, err / std::fabs(want));
      }
      if (act == GemmAct::kGeluErf) {
        std::vector<float> table(x.size());
        const bool avx512 = std::string(g->name).rfind("avx512", 0) == 0;
        (avx512 ? x86::gelu_erf_table_avx512 : x86::gelu_erf_table_avx2)(x.data(), table.data(), m);
        CHECK(std::memcmp(c.data(), table.data(), x.size() * sizeof(float)) == 0);
      }
      MESSAGE(std::string(g->name), std::string(act == GemmAct::kGeluErf ? " gelu erf" : " gelu tanh"),
              ": worst absolute error ", worst_abs, ", worst relative (|gelu| > 0.05) ", worst_rel);
      CHECK(worst_abs < 5e-7);
      CHECK(worst_rel < 3e-6);
    }
  }
}

// C = act(a·1) over a dense sweep and the edge values: the SiLU and HardSwish epilogues against the Unary
// kernel's float functions (backends/cpu/ref/unary_functions.h), which the fused op replaces. HardSwish is
// the same float arithmetic; SiLU's exp is within ~1e-7 relative (1e-6 allowed, as the Unary kernel's test).
// Infinities and NaN give what the reference gives (silu(-inf) = NaN, hard_swish(-inf) = NaN), and silu of a
// large negative x is 0 to within 1e-36.
TEST_CASE("the GEMM epilogue's SiLU and HardSwish match the Unary kernel's functions, edges included") {
  const auto tiles = tiles_here();
  if (tiles.empty()) return;
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x;
  for (float v = -24.f; v <= 24.f; v += 1.f / 64) x.push_back(v);
  for (float v : {-1000.f, -100.f, -89.f, -88.5f, -87.f, 87.f, 89.f, 100.f, 1e30f, -1e30f, 1e-20f, -1e-20f,
                  0.f, -0.f, 3.f, -3.f, inf, -inf, std::nanf("")})
    x.push_back(v);
  const int64_t m = static_cast<int64_t>(x.size());
  for (const GemmKernels* g : tiles) {
    x86::AlignedFloats packed(static_cast<size_t>(x86::gemm_packed_floats(1, 1, g->nr)));
    const float one = 1.f;
    x86::gemm_pack_transposed(&one, 1, 1, g->nr, packed.data());
    for (GemmAct act : {GemmAct::kSilu, GemmAct::kHardSwish}) {
      const bool silu = act == GemmAct::kSilu;
      CAPTURE(g->name);
      CAPTURE(silu);
      std::vector<float> c(m, 12345.f);
      GemmPanel gp;
      gp.a = x.data();
      gp.lda = 1;
      gp.m = m;
      gp.k = 1;
      gp.b = packed.data();
      gp.cols = 1;
      gp.c = c.data();
      gp.ldc = 1;
      gp.act = act;
      g->panel(gp);
      double worst_rel = 0;
      for (int64_t i = 0; i < m; ++i) {
        CAPTURE(x[i]);
        const float want = silu ? ref::silu(x[i]) : ref::hard_swish(x[i]);
        if (std::isnan(want) || std::isinf(want)) {
          CHECK((std::isnan(want) ? std::isnan(c[i]) : c[i] == want));
          continue;
        }
        if (silu) {
          const double err = std::fabs(static_cast<double>(c[i]) - want);
          CHECK(err <= 1e-6 * std::fabs(want) + 1e-36);
          if (std::fabs(want) > 1e-30) worst_rel = std::max(worst_rel, err / std::fabs(want));
        } else {
          CHECK(c[i] == want);  // the same float operations
        }
      }
      MESSAGE((std::string(g->name) + (silu ? " silu" : " hard_swish")), ": worst relative error ", worst_rel,
              " (|silu| > 1e-30)");
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace vitrt
