// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SOFT's Newton–Raphson pseudo-inverses, float32 throughout. The scalar steps follow PyTorch's evaluation of
// the Python expressions: `c / x**2` is x.pow(2).reciprocal() * c, and the Python constants become float.
#include "backends/cpu/ref/newton_inverse.h"

#include <cmath>

namespace vitrt {
namespace ref {
namespace {

// c[n,n] = a[n,n] · b[n,n], each output row accumulated in float over rows of b (contiguous, vectorises).
void matmul(const float* a, const float* b, int64_t n, float* c) {
  for (int64_t i = 0; i < n; ++i) {
    float* ci = c + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = 0.0f;
    const float* ai = a + i * n;
    for (int64_t t = 0; t < n; ++t) {
      const float av = ai[t];
      const float* bt = b + t * n;
      for (int64_t j = 0; j < n; ++j) ci[j] += av * bt[j];
    }
  }
}

// max_i Σ_j k[i][j], in float.
float max_row_sum(const float* k, int64_t m) {
  float best = -INFINITY;
  for (int64_t i = 0; i < m; ++i) {
    float s = 0.0f;
    for (int64_t j = 0; j < m; ++j) s += k[i * m + j];
    best = s > best ? s : best;
  }
  return best;
}

// ‖I − p·v‖₁: the largest column sum of |I − p·v|. tmp: m·m floats.
float one_norm_residual(const float* p, const float* v, int64_t m, float* tmp) {
  matmul(p, v, m, tmp);
  float best = -INFINITY;
  for (int64_t j = 0; j < m; ++j) {
    float s = 0.0f;
    for (int64_t i = 0; i < m; ++i) s += std::fabs((i == j ? 1.0f : 0.0f) - tmp[i * m + j]);
    best = s > best ? s : best;
  }
  return best;
}

}  // namespace

void newton_iterate(const float* p, int64_t m, int32_t iterations, float* v, float* work) {
  const int64_t mm = m * m;
  float* vp = work;        // V·P
  float* vpv = work + mm;  // (V·P)·V
  for (int32_t it = 0; it < iterations; ++it) {
    matmul(v, p, m, vp);
    matmul(vp, v, m, vpv);
    for (int64_t i = 0; i < mm; ++i) v[i] = 2.0f * v[i] - vpv[i];
  }
}

void newton_inverse_scaled(const float* k, int64_t m, int32_t iterations, float regularizer, float* inv,
                           float* work) {
  const int64_t mm = m * m;
  const float s = max_row_sum(k, m);
  const float alpha = (1.0f / (s * s)) * static_cast<float>(0.9 * 2);  // 0.9 * 2 / s**2
  float* p = work;
  for (int64_t i = 0; i < mm; ++i) p[i] = k[i];
  for (int64_t i = 0; i < m; ++i) p[i * m + i] += regularizer;  // P = K + reg·I, after α
  for (int64_t i = 0; i < mm; ++i) inv[i] = alpha * p[i];
  newton_iterate(p, m, iterations, inv, work + mm);
}

void newton_inverse_legacy(const float* k, int64_t count, int64_t m, int32_t iterations, float* inv,
                           float* work) {
  const int64_t mm = m * m;
  if (count <= 0 || m <= 0) return;
  float s = -INFINITY;
  for (int64_t b = 0; b < count; ++b) {
    const float sb = max_row_sum(k + b * mm, m);
    s = sb > s ? sb : s;
  }
  float alpha = (1.0f / (s * s)) * 2.0f;  // 2 / max**2, one α for the whole batch
  // pnorm of V = α·K over the whole batch.
  auto pnorm = [&](float a) {
    float best = -INFINITY;
    for (int64_t b = 0; b < count; ++b) {
      float* v = inv + b * mm;
      const float* kb = k + b * mm;
      for (int64_t i = 0; i < mm; ++i) v[i] = a * kb[i];
      const float r = one_norm_residual(kb, v, m, work);
      best = r > best ? r : best;
    }
    return best;
  };
  float norm = pnorm(alpha);
  for (int tries = 0; norm > 1.01f && tries < 10; ++tries) {
    alpha *= 0.5f;
    norm = pnorm(alpha);
  }
  // inv now holds α·K for the final α.
  for (int64_t b = 0; b < count; ++b) newton_iterate(k + b * mm, m, iterations, inv + b * mm, work);
}

}  // namespace ref
}  // namespace vitrt
