// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The inner loops, written once on xsimd batches and instantiated per ISA (simd_avx512.cpp, simd_avx2.cpp).
// Everything lives in an anonymous namespace so that no inline function compiled with AVX-512 flags can be
// merged by the linker into the baseline or AVX2 code.
#include <cmath>
#include <cstdint>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/gelu_vec_impl.h"
#include "backends/cpu/x86/pool2d_row_impl.h"
#include "backends/cpu/x86/simd.h"
#include "backends/cpu/x86/vec_fma.h"

namespace vitrt {
namespace x86 {
namespace {

template <class A>
using VF = xsimd::batch<float, A>;

template <class A>
inline float hmax(const VF<A>& v) {
  alignas(64) float t[VF<A>::size];
  v.store_aligned(t);
  float m = t[0];
  for (std::size_t i = 1; i < VF<A>::size; ++i) m = t[i] > m ? t[i] : m;
  return m;
}

template <class A>
void binary(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  int64_t i = 0;
  if (op == BinaryOp::kPRelu) {  // as the reference: x·slope where x < 0 (one rounding), x elsewhere
    const B zero(0.0f);
    if (sa && sb) {
      for (; i + W <= n; i += W) {
        const B x = B::load_unaligned(a + i);
        xsimd::select(x < zero, x * B::load_unaligned(b + i), x).store_unaligned(y + i);
      }
      for (; i < n; ++i) y[i] = a[i] < 0.0f ? a[i] * b[i] : a[i];
    } else if (sa) {
      const B s(*b);
      for (; i + W <= n; i += W) {
        const B x = B::load_unaligned(a + i);
        xsimd::select(x < zero, x * s, x).store_unaligned(y + i);
      }
      for (; i < n; ++i) y[i] = a[i] < 0.0f ? a[i] * *b : a[i];
    } else {
      for (; i < n; ++i) y[i] = *a < 0.0f ? *a * b[sb ? i : 0] : *a;
    }
  } else if (op == BinaryOp::kAdd) {
    if (sa && sb) {
      for (; i + W <= n; i += W) (B::load_unaligned(a + i) + B::load_unaligned(b + i)).store_unaligned(y + i);
      for (; i < n; ++i) y[i] = a[i] + b[i];
    } else if (sa) {
      const B bv(*b);
      for (; i + W <= n; i += W) (B::load_unaligned(a + i) + bv).store_unaligned(y + i);
      for (; i < n; ++i) y[i] = a[i] + *b;
    } else if (sb) {
      const B av(*a);
      for (; i + W <= n; i += W) (av + B::load_unaligned(b + i)).store_unaligned(y + i);
      for (; i < n; ++i) y[i] = *a + b[i];
    } else {
      for (; i < n; ++i) y[i] = *a + *b;
    }
  } else {
    if (sa && sb) {
      for (; i + W <= n; i += W) (B::load_unaligned(a + i) * B::load_unaligned(b + i)).store_unaligned(y + i);
      for (; i < n; ++i) y[i] = a[i] * b[i];
    } else if (sa) {
      const B bv(*b);
      for (; i + W <= n; i += W) (B::load_unaligned(a + i) * bv).store_unaligned(y + i);
      for (; i < n; ++i) y[i] = a[i] * *b;
    } else if (sb) {
      const B av(*a);
      for (; i + W <= n; i += W) (av * B::load_unaligned(b + i)).store_unaligned(y + i);
      for (; i < n; ++i) y[i] = *a * b[i];
    } else {
      for (; i < n; ++i) y[i] = *a * *b;
    }
  }
}

// gelu_vec's vector ops (gelu_vec_impl.h) on xsimd batches: the polynomial GELU of the elementwise Gelu (the
// GEMM epilogues and the channels-last depthwise rows use the table ones, gelu_table_avx512.h and
// gelu_table_avx2.h; the image-layout depthwise planes keep gelu_vec), several times cheaper than xsimd's
// erf / tanh and as accurate as PyTorch's float32.
template <class A>
struct GeluOps {
  using V = VF<A>;
  static V zero() { return V(0.0f); }
  static V set1(float x) { return V(x); }
  static V add(V a, V b) { return a + b; }
  static V sub(V a, V b) { return a - b; }
  static V mul(V a, V b) { return a * b; }
  static V fma(V a, V b, V c) { return vec_fma(a, b, c); }
  static V min(V a, V b) { return xsimd::min(a, b); }
  static V max(V a, V b) { return xsimd::max(a, b); }
  static V abs(V a) { return xsimd::abs(a); }
  static V round(V a) { return xsimd::nearbyint(a); }
  static V pow2n(V n) {  // n integral in [-127, 127]
    using I = xsimd::batch<int32_t, A>;
    return xsimd::bitwise_cast<V>((xsimd::batch_cast<int32_t>(n) + I(127)) << 23);
  }
  static V rcp(V d) { return V(1.0f) / d; }
  static V select_neg(V x, V if_neg, V otherwise) { return xsimd::select(x < V(0.0f), if_neg, otherwise); }
};

template <class A>
inline VF<A> gelu_erf_v(const VF<A>& x) {
  return gelu_vec::gelu_erf<GeluOps<A>>(x);
}

template <class A>
inline VF<A> gelu_tanh_v(const VF<A>& x) {
  return gelu_vec::gelu_tanh<GeluOps<A>>(x);
}

template <class A>
void gelu(const float* x, float* y, int64_t n, bool tanh_form) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  int64_t i = 0;
  if (tanh_form) {
    for (; i + W <= n; i += W) gelu_tanh_v<A>(B::load_unaligned(x + i)).store_unaligned(y + i);
  } else {
    for (; i + W <= n; i += W) gelu_erf_v<A>(B::load_unaligned(x + i)).store_unaligned(y + i);
  }
  if (i < n) {  // tail through a padded vector, so it gets exactly the same arithmetic
    alignas(64) float t[W] = {};
    for (int64_t j = i; j < n; ++j) t[j - i] = x[j];
    B v = B::load_aligned(t);
    (tanh_form ? gelu_tanh_v<A>(v) : gelu_erf_v<A>(v)).store_aligned(t);
    for (int64_t j = i; j < n; ++j) y[j] = t[j - i];
  }
}

template <class A>
void relu(const float* x, float* y, int64_t n) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  int64_t i = 0;
  const B z(0.0f);
  for (; i + W <= n; i += W) {
    const B v = B::load_unaligned(x + i);
    xsimd::select(v < z, z, v).store_unaligned(y + i);  // NaN stays NaN, as torch.relu
  }
  for (; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

template <class A>
void layer_norm(const float* x, float* y, int64_t rows, int64_t c, const float* gamma, const float* beta,
                float eps) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * c;
    float* yr = y + r * c;
    B s0(0.0f), s1(0.0f);
    int64_t i = 0;
    for (; i + 2 * W <= c; i += 2 * W) {
      s0 += B::load_unaligned(xr + i);
      s1 += B::load_unaligned(xr + i + W);
    }
    for (; i + W <= c; i += W) s0 += B::load_unaligned(xr + i);
    float sum = xsimd::hadd(s0 + s1);
    for (; i < c; ++i) sum += xr[i];
    const float mean = sum / static_cast<float>(c);
    const B mv(mean);
    B q0(0.0f), q1(0.0f);
    i = 0;
    for (; i + 2 * W <= c; i += 2 * W) {
      const B d0 = B::load_unaligned(xr + i) - mv, d1 = B::load_unaligned(xr + i + W) - mv;
      q0 = vec_fma(d0, d0, q0);
      q1 = vec_fma(d1, d1, q1);
    }
    for (; i + W <= c; i += W) {
      const B d0 = B::load_unaligned(xr + i) - mv;
      q0 = vec_fma(d0, d0, q0);
    }
    float sq = xsimd::hadd(q0 + q1);
    for (; i < c; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
    const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(c) + eps);
    const B rv(rstd);
    i = 0;
    for (; i + W <= c; i += W) {
      B v = (B::load_unaligned(xr + i) - mv) * rv;
      if (gamma) v *= B::load_unaligned(gamma + i);
      if (beta) v += B::load_unaligned(beta + i);
      v.store_unaligned(yr + i);
    }
    for (; i < c; ++i) {
      float v = (xr[i] - mean) * rstd;
      if (gamma) v *= gamma[i];
      if (beta) v += beta[i];
      yr[i] = v;
    }
  }
}

// Softmax of `rows` contiguous rows of n: max, exp(x - max) (xsimd::exp, as flash_attention_impl.h) stored
// with its sum, then the scaling. The tail goes through a vector padded with -inf (its exp is 0, so the sum
// is that of the row). Row sums accumulate in float vectors, each block of 1024 elements' total added in
// double (the reference sums in double; this keeps the rounding error that of a short float sum).
template <class A>
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  constexpr int64_t kBlock = 1024;
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t body = n / W * W;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xs = x + r * n;
    float* ys = y + r * n;
    alignas(64) float t[W];
    for (int64_t j = 0; j < W; ++j) t[j] = body + j < n ? xs[body + j] : ninf;
    B mx = B::load_aligned(t);
    for (int64_t j = 0; j < body; j += W) mx = xsimd::max(mx, B::load_unaligned(xs + j));
    const B mv(hmax<A>(mx));
    double total = 0.0;
    for (int64_t j0 = 0; j0 < body; j0 += kBlock) {
      const int64_t j1 = j0 + kBlock < body ? j0 + kBlock : body;
      B acc(0.0f);
      for (int64_t j = j0; j < j1; j += W) {
        const B e = xsimd::exp(B::load_unaligned(xs + j) - mv);
        e.store_unaligned(ys + j);
        acc += e;
      }
      total += xsimd::hadd(acc);
    }
    if (body < n) {
      const B e = xsimd::exp(B::load_aligned(t) - mv);
      e.store_aligned(t);
      total += xsimd::hadd(e);
    }
    const float rcp = static_cast<float>(1.0 / total);
    const B rv(rcp);
    for (int64_t j = 0; j < body; j += W) (B::load_unaligned(ys + j) * rv).store_unaligned(ys + j);
    for (int64_t j = body; j < n; ++j) ys[j] = t[j - body] * rcp;
  }
}

// Softmax along an axis of n with `inner` > 1 elements after it: columns [c0, c1) of one outer slice
// x[n][inner], W columns at a time (the last group through padded vectors), each column's sum in double.
template <class A>
void softmax_columns(const float* x, float* y, int64_t n, int64_t inner, int64_t c0, int64_t c1) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  constexpr int64_t kBlock = 256;
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t c = c0; c < c1; c += W) {
    const int64_t w = c1 - c < W ? c1 - c : W;
    alignas(64) float t[W];
    auto load = [&](const float* p) {
      if (w == W) return B::load_unaligned(p);
      for (int64_t i = 0; i < W; ++i) t[i] = i < w ? p[i] : ninf;
      return B::load_aligned(t);
    };
    auto store = [&](const B& v, float* p) {
      if (w == W) return v.store_unaligned(p);
      v.store_aligned(t);
      for (int64_t i = 0; i < w; ++i) p[i] = t[i];
    };
    B mx = load(x + c);
    for (int64_t j = 1; j < n; ++j) mx = xsimd::max(mx, load(x + j * inner + c));
    double total[W] = {};
    alignas(64) float part[W];
    for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
      const int64_t j1 = j0 + kBlock < n ? j0 + kBlock : n;
      B acc(0.0f);
      for (int64_t j = j0; j < j1; ++j) {
        const B e = xsimd::exp(load(x + j * inner + c) - mx);
        store(e, y + j * inner + c);
        acc += e;
      }
      acc.store_aligned(part);
      for (int64_t i = 0; i < W; ++i) total[i] += part[i];
    }
    for (int64_t i = 0; i < W; ++i) part[i] = static_cast<float>(1.0 / total[i]);
    const B rv = B::load_aligned(part);
    for (int64_t j = 0; j < n; ++j) store(load(y + j * inner + c) * rv, y + j * inner + c);
  }
}

template <class A>
double sum(const float* x, int64_t n) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  double total = 0;
  for (int64_t i0 = 0; i0 < n; i0 += 1024) {
    const int64_t i1 = n - i0 < 1024 ? n : i0 + 1024;
    B a0(0.0f), a1(0.0f), a2(0.0f), a3(0.0f);
    int64_t i = i0;
    for (; i + 4 * W <= i1; i += 4 * W) {
      a0 += B::load_unaligned(x + i);
      a1 += B::load_unaligned(x + i + W);
      a2 += B::load_unaligned(x + i + 2 * W);
      a3 += B::load_unaligned(x + i + 3 * W);
    }
    for (; i + W <= i1; i += W) a0 += B::load_unaligned(x + i);
    float block = xsimd::hadd((a0 + a1) + (a2 + a3));
    for (; i < i1; ++i) block += x[i];
    total += block;
  }
  return total;
}

// y[i] = f(x[i]) with f on vectors; the tail goes through a zero-padded vector, so every element gets the
// same arithmetic.
template <class A, class F>
void map_each(const float* x, float* y, int64_t n, F f) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  int64_t i = 0;
  for (; i + W <= n; i += W) f(B::load_unaligned(x + i)).store_unaligned(y + i);
  if (i < n) {
    alignas(64) float t[W] = {};
    for (int64_t j = i; j < n; ++j) t[j - i] = x[j];
    f(B::load_aligned(t)).store_aligned(t);
    for (int64_t j = i; j < n; ++j) y[j] = t[j - i];
  }
}

// min(max(v, lo), hi) letting NaN through, as ref::clamp_nan.
template <class A>
inline VF<A> clamp_nan_v(const VF<A>& v, const VF<A>& lo, const VF<A>& hi) {
  const VF<A> low = xsimd::select(v < lo, lo, v);
  return xsimd::select(low > hi, hi, low);
}

// 1 + e^-x with gelu_vec::exp (relative error ~1e-7), +inf where e^-x leaves that exp's clamped range
// (-x > 88.3), as the reference's e^-x overflows there (at -x > 88.72; in between, the results differ by less
// than 1e-36 absolute): sigmoid and silu then get 0 and x/inf as the reference does (-inf gives NaN for
// silu).
template <class A>
inline VF<A> one_plus_exp_neg(const VF<A>& v) {
  const VF<A> minus = VF<A>(0.0f) - v;
  const VF<A> d = VF<A>(1.0f) + gelu_vec::exp<GeluOps<A>>(minus);
  return xsimd::select(minus > VF<A>(88.3f), VF<A>(std::numeric_limits<float>::infinity()), d);
}

template <class A>
void unary(VecUnary op, float alpha, float beta, const float* x, float* y, int64_t n) {
  using B = VF<A>;
  switch (op) {
    case VecUnary::kAbs:
      return map_each<A>(x, y, n, [](B v) { return xsimd::abs(v); });
    case VecUnary::kNeg:
      // a sign flip (xor), as the scalar -x: xsimd's unary minus is 0 - v, which maps +0 to +0
      return map_each<A>(x, y, n, [](B v) { return xsimd::bitwise_xor(v, B(-0.0f)); });
    case VecUnary::kFloor:
      return map_each<A>(x, y, n, [](B v) { return xsimd::floor(v); });
    case VecUnary::kCeil:
      return map_each<A>(x, y, n, [](B v) { return xsimd::ceil(v); });
    case VecUnary::kRound:
      return map_each<A>(x, y, n, [](B v) { return xsimd::nearbyint(v); });
    case VecUnary::kSqrt:
      return map_each<A>(x, y, n, [](B v) { return xsimd::sqrt(v); });
    case VecUnary::kReciprocal:
      return map_each<A>(x, y, n, [](B v) { return B(1.0f) / v; });
    case VecUnary::kClip:
      return map_each<A>(x, y, n, [lo = B(alpha), hi = B(beta)](B v) { return clamp_nan_v<A>(v, lo, hi); });
    case VecUnary::kLeakyRelu:
      return map_each<A>(x, y, n, [a = B(alpha)](B v) { return xsimd::select(v < B(0.0f), a * v, v); });
    case VecUnary::kHardSwish:
      // x·clamp(x/6 + 1/2, 0, 1): a true division, as the reference (no multiply by 1/6).
      return map_each<A>(x, y, n,
                         [](B v) { return v * clamp_nan_v<A>(v / B(6.0f) + B(0.5f), B(0.0f), B(1.0f)); });
    case VecUnary::kSigmoid:
      // NaN in, NaN out (the clamped exp would turn it into a number)
      return map_each<A>(
          x, y, n, [](B v) { return xsimd::select(xsimd::isnan(v), v, B(1.0f) / one_plus_exp_neg<A>(v)); });
    case VecUnary::kSilu:
      return map_each<A>(x, y, n, [](B v) { return v / one_plus_exp_neg<A>(v); });
  }
}

template <class A>
float dot(const float* a, const float* b, int64_t n) {
  using B = VF<A>;
  constexpr int64_t W = B::size;
  B a0(0.0f), a1(0.0f);
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    a0 = vec_fma(B::load_unaligned(a + i), B::load_unaligned(b + i), a0);
    a1 = vec_fma(B::load_unaligned(a + i + W), B::load_unaligned(b + i + W), a1);
  }
  for (; i + W <= n; i += W) a0 = vec_fma(B::load_unaligned(a + i), B::load_unaligned(b + i), a0);
  float r = xsimd::hadd(a0 + a1);
  for (; i < n; ++i) r += a[i] * b[i];
  return r;
}

template <class A>
SimdTable make_table(const char* name) {
  SimdTable t;
  t.name = name;
  t.width = static_cast<int>(VF<A>::size);
  t.binary = &binary<A>;
  t.gelu = &gelu<A>;
  t.relu = &relu<A>;
  t.unary = &unary<A>;
  t.layer_norm = &layer_norm<A>;
  t.softmax_rows = &softmax_rows<A>;
  t.softmax_columns = &softmax_columns<A>;
  t.pool2d_row = &pool2d_impl::row<A>;
  t.sum = &sum<A>;
  t.dot = &dot<A>;
  return t;
}

}  // namespace
}  // namespace x86
}  // namespace vitrt
