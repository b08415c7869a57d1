// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SOFT's Newton–Raphson pseudo-inverses (backends/cpu/ref/newton_inverse.h) against PyTorch's iteration on
// ill-conditioned and well-conditioned matrices, and a check that the engine reproduces the iteration rather
// than a true inverse: 20 iterations do not converge when K2 is ill-conditioned (cond >= 1e4), so there the
// result must differ from the inverse, while on a well-conditioned matrix it must agree with it.
//
// Cases: $VITRT_FIXTURE_DIR/op_cases/soft_newton (written by tools/reference/op_cases_soft.py, always
// present) and $VITRT_FIXTURE_DIR/soft_cases/newton (make_soft_cases.py, used when present). Both use
// {"cases": [{"name", "variant": "scaled"|"legacy", "iterations", "regularizer", "input", "expected64",
// "expected32", "cond"}]}, with .npy paths relative to the manifest's folder; an input [count,m,m] is one
// batch (the legacy variant shares its step size over it).
#include "backends/cpu/ref/newton_inverse.h"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/npy.h"
#include "op_test_util.h"

namespace vitrt {
namespace test {
namespace {

// Runs the engine's variant on `count` m×m matrices.
std::vector<float> run_newton(const std::string& variant, const std::vector<float>& in, int64_t count,
                              int64_t m, int iterations, float regularizer) {
  std::vector<float> out(in.size(), std::nanf(""));
  std::vector<float> work(static_cast<size_t>(ref::newton_workspace_floats(m)), std::nanf(""));
  if (variant == "legacy") {
    ref::newton_inverse_legacy(in.data(), count, m, iterations, out.data(), work.data());
  } else {
    for (int64_t b = 0; b < count; ++b)
      ref::newton_inverse_scaled(in.data() + b * m * m, m, iterations, regularizer, out.data() + b * m * m,
                                 work.data());
  }
  return out;
}

// Checks every case of one manifest; returns the number checked (0 when the manifest is absent).
int check_manifest(const std::string& dir, bool required) {
  std::ifstream f(dir + "/manifest.json");
  if (!f) {
    CHECK_MESSAGE(!required, "missing ", dir, "/manifest.json (run tools/reference/make_op_cases.py)");
    return 0;
  }
  nlohmann::json manifest;
  f >> manifest;
  int checked = 0;
  for (const auto& c : manifest.at("cases")) {
    const std::string name = c.at("name");
    INFO("newton case ", dir, ": ", name);
    const std::string variant = c.at("variant");
    REQUIRE((variant == "scaled" || variant == "legacy"));
    std::vector<float> in;
    std::vector<double> e64, e32;
    std::vector<int64_t> shape, shape64, shape32;
    Status s = read_npy_f32(dir + "/" + c.at("input").get<std::string>(), &in, &shape);
    REQUIRE_MESSAGE(s.ok(), s.message());
    s = read_npy_f64(dir + "/" + c.at("expected64").get<std::string>(), &e64, &shape64);
    REQUIRE_MESSAGE(s.ok(), s.message());
    s = read_npy_f64(dir + "/" + c.at("expected32").get<std::string>(), &e32, &shape32);
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(shape.size() >= 2);
    REQUIRE(shape == shape64);
    REQUIRE(shape == shape32);
    const int64_t m = shape.back();
    REQUIRE(shape[shape.size() - 2] == m);
    const int64_t count = static_cast<int64_t>(in.size()) / (m * m);
    const std::vector<float> out = run_newton(variant, in, count, m, c.at("iterations").get<int>(),
                                              c.value("regularizer", variant == "scaled" ? 0.01f : 0.0f));
    Comparison cmp = compare_to_reference(out, e64, e32);
    CHECK_MESSAGE(cmp.ok, name, " (cond ", c.value("cond", 0.0), "): ", cmp.message);
    if (std::getenv("VITRT_OPS_VERBOSE")) MESSAGE(name, ": ", cmp.message);
    ++checked;
  }
  return checked;
}

TEST_CASE("Newton pseudo-inverses match PyTorch's iteration") {
  const char* fixtures = std::getenv("VITRT_FIXTURE_DIR");
  REQUIRE_MESSAGE(fixtures, "VITRT_FIXTURE_DIR is not set");
  const int own = check_manifest(std::string(fixtures) + "/op_cases/soft_newton", true);
  CHECK(own >= 8);
  const int shared = check_manifest(std::string(fixtures) + "/soft_cases/newton", false);
  MESSAGE("checked ", own, " Newton cases from op_cases and ", shared, " from soft_cases");
}

// ---- Independent of any fixture: the iteration is not a true inverse on ill-conditioned matrices. ----

// A SOFT-like K2: the Gaussian kernel exp(-|x_i - x_j|^2 / 2) of m points in 3-D with the given spread; the
// smaller the spread, the closer the points and the worse the conditioning.
std::vector<float> gaussian_kernel(int64_t m, double spread) {
  std::vector<double> pts(static_cast<size_t>(m * 3));
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (double& p : pts) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    p = (static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5) * 2.0 * spread;
  }
  std::vector<float> k(static_cast<size_t>(m * m));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double d2 = 0;
      for (int c = 0; c < 3; ++c) d2 += (pts[i * 3 + c] - pts[j * 3 + c]) * (pts[i * 3 + c] - pts[j * 3 + c]);
      k[i * m + j] = static_cast<float>(std::exp(-d2 / 2));
    }
  return k;
}

// inv(a + reg·I) in double by Gauss–Jordan with partial pivoting; false when singular.
bool true_inverse(const std::vector<float>& a, int64_t m, double reg, std::vector<double>* inv) {
  std::vector<double> w(static_cast<size_t>(m * 2 * m), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) w[i * 2 * m + j] = a[i * m + j] + (i == j ? reg : 0.0);
    w[i * 2 * m + m + i] = 1.0;
  }
  for (int64_t col = 0; col < m; ++col) {
    int64_t piv = col;
    for (int64_t r = col + 1; r < m; ++r)
      if (std::fabs(w[r * 2 * m + col]) > std::fabs(w[piv * 2 * m + col])) piv = r;
    if (w[piv * 2 * m + col] == 0.0) return false;
    for (int64_t j = 0; j < 2 * m; ++j) std::swap(w[col * 2 * m + j], w[piv * 2 * m + j]);
    const double p = w[col * 2 * m + col];
    for (int64_t j = 0; j < 2 * m; ++j) w[col * 2 * m + j] /= p;
    for (int64_t r = 0; r < m; ++r) {
      if (r == col) continue;
      const double f = w[r * 2 * m + col];
      if (f == 0.0) continue;
      for (int64_t j = 0; j < 2 * m; ++j) w[r * 2 * m + j] -= f * w[col * 2 * m + j];
    }
  }
  inv->assign(static_cast<size_t>(m * m), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) (*inv)[i * m + j] = w[i * 2 * m + m + j];
  return true;
}

double one_norm(const std::vector<double>& a, int64_t m) {
  double best = 0;
  for (int64_t j = 0; j < m; ++j) {
    double s = 0;
    for (int64_t i = 0; i < m; ++i) s += std::fabs(a[i * m + j]);
    best = std::fmax(best, s);
  }
  return best;
}

// cond₁(a + reg·I).
double condition(const std::vector<float>& a, int64_t m, double reg) {
  std::vector<double> inv, ad(a.begin(), a.end());
  for (int64_t i = 0; i < m; ++i) ad[i * m + i] += reg;
  if (!true_inverse(a, m, reg, &inv)) return INFINITY;
  return one_norm(ad, m) * one_norm(inv, m);
}

// max |x - ref| / max |ref|
double relative_error(const std::vector<float>& x, const std::vector<double>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    err = std::fmax(err, std::fabs(x[i] - ref[i]));
    scale = std::fmax(scale, std::fabs(ref[i]));
  }
  return err / scale;
}

TEST_CASE(
    "20 Newton iterations are not a true inverse on an ill-conditioned K2, but are on a well-conditioned "
    "one") {
  constexpr int64_t m = 16;
  // Ill-conditioned: shrink the spread until cond(K2) >= 1e4.
  double spread = 2.0;
  std::vector<float> ill = gaussian_kernel(m, spread);
  while (condition(ill, m, 0.0) < 1e4 && spread > 1e-3) ill = gaussian_kernel(m, spread *= 0.9);
  const double cond_ill = condition(ill, m, 0.0);
  REQUIRE(cond_ill >= 1e4);
  REQUIRE(cond_ill < 1e7);  // still invertible in float32 terms
  const std::vector<float> well = gaussian_kernel(m, 8.0);
  const double cond_well = condition(well, m, 0.0);
  REQUIRE(cond_well < 10.0);
  MESSAGE("cond(ill) = ", cond_ill, ", cond(well) = ", cond_well);

  for (const char* variant : {"scaled", "legacy"}) {
    INFO("variant ", variant);
    const double reg = std::string(variant) == "scaled" ? 0.01 : 0.0;
    std::vector<double> inv_ill, inv_well;
    REQUIRE(true_inverse(ill, m, reg, &inv_ill));
    REQUIRE(true_inverse(well, m, reg, &inv_well));

    const std::vector<float> it_ill = run_newton(variant, ill, 1, m, 20, static_cast<float>(reg));
    const std::vector<float> it_well = run_newton(variant, well, 1, m, 20, static_cast<float>(reg));
    for (float v : it_ill) REQUIRE(std::isfinite(v));
    const double e_ill = relative_error(it_ill, inv_ill);
    const double e_well = relative_error(it_well, inv_well);
    MESSAGE(std::string(variant), ": relative distance to the true inverse: ill-conditioned ", e_ill,
            ", well-conditioned ", e_well);
    CHECK(e_ill > 0.05);   // 20 iterations have not converged: the engine must not substitute an inverse
    CHECK(e_well < 1e-4);  // ... which they do reach when K2 is well-conditioned

    // With enough iterations the same start does converge on the ill-conditioned matrix (the iteration is
    // right, only truncated).
    if (std::string(variant) == "scaled") {
      const std::vector<float> it_long = run_newton(variant, ill, 1, m, 60, static_cast<float>(reg));
      CHECK(relative_error(it_long, inv_ill) < 1e-3);
    }
  }
}

TEST_CASE("legacy Newton shares one step size over the batch") {
  constexpr int64_t m = 8;
  const std::vector<float> a = gaussian_kernel(m, 0.8);
  std::vector<float> b = gaussian_kernel(m, 3.0);
  for (float& v : b) v *= 3.0f;  // larger row sums: a smaller global step size
  std::vector<float> both(a);
  both.insert(both.end(), b.begin(), b.end());
  const std::vector<float> alone = run_newton("legacy", a, 1, m, 3, 0.0f);
  const std::vector<float> batched = run_newton("legacy", both, 2, m, 3, 0.0f);
  bool differs = false;
  for (int64_t i = 0; i < m * m; ++i) differs = differs || alone[i] != batched[i];
  CHECK_MESSAGE(differs, "the first matrix's result should depend on the second (global alpha)");
  // A zero-iteration run returns the start α·K with α = 2 / max_row_sum², halved by the backtracking 0..10
  // times.
  const std::vector<float> start = run_newton("legacy", b, 1, m, 0, 0.0f);
  float rs = 0;
  for (int64_t i = 0; i < m; ++i) {
    float s = 0;
    for (int64_t j = 0; j < m; ++j) s += b[i * m + j];
    rs = std::fmax(rs, s);
  }
  float alpha = (1.0f / (rs * rs)) * 2.0f;
  bool found = false;
  for (int k = 0; k <= 10 && !found; ++k, alpha *= 0.5f) found = start[0] == alpha * b[0];
  CHECK_MESSAGE(found, "start ", start[0], " is not 2/max_row_sum^2 * 0.5^k times K");
}

}  // namespace
}  // namespace test
}  // namespace vitrt
