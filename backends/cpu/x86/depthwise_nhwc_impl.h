// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The channels-last depthwise row kernel, written once over an ISA's vector ops T (vec_avx512.h, vec_avx2.h).
// Every output pixel is C contiguous floats, so each tap is one vector multiply-add per W channels with the
// tap's weight vector. A strip of S neighbouring output pixels keeps S accumulators in registers and loads
// each tap's weights once for all of them; pixels whose taps all fall inside the image (the interior of the
// row) take the unchecked strips, the few at the edges a checked one-pixel path. Channels past the last full
// vector use masked loads and stores. Every loop over a strip's pixels is fully unrolled (GCC unroll): one
// loop left rolled (the GELU's, too long for GCC's own unrolling) kept the accumulators in memory and made
// the kernel about 1.5x slower.
#include <algorithm>

#include "backends/cpu/x86/depthwise_nhwc.h"
#include "backends/cpu/x86/gelu_vec_impl.h"
#include "backends/cpu/x86/swish_vec_impl.h"

namespace vitrt {
namespace x86 {
namespace depthwise_impl {

template <class T, int S>
inline void activate(GemmAct act, typename T::V (&acc)[S]) {
  if (act == GemmAct::kRelu) {
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) acc[s] = T::max(acc[s], T::zero());
  } else if (act == GemmAct::kGeluErf) {
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) acc[s] = gelu_vec::erf_gelu_of<T>(acc[s]);
  } else if (act == GemmAct::kGeluTanh) {
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) acc[s] = gelu_vec::gelu_tanh<T>(acc[s]);
  } else if (act == GemmAct::kSilu) {
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) acc[s] = swish_vec::silu<T>(acc[s]);
  } else if (act == GemmAct::kHardSwish) {
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) acc[s] = swish_vec::hard_swish<T>(acc[s]);
  } else if (act == GemmAct::kRelu6) {
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) acc[s] = swish_vec::relu6<T>(acc[s]);
  }
}

// Input row iy of the image (0 <= iy < r.h): [W, C] floats, from the row table when there is one.
inline const float* input_row(const DepthwiseRow& r, int64_t iy) {
  return r.src_rows ? r.src_rows[iy] : r.src + iy * r.w * r.c;
}

template <class T, bool Partial>
inline typename T::V load(const float* p, int valid) {
  if constexpr (Partial)
    return T::loadn(p, valid);
  else
    return T::loadu(p);
}

// The S accumulators of a strip start at the bias (or zero).
template <class T, int S, bool Partial>
inline void start_strip(const DepthwiseRow& r, typename T::V (&acc)[S], int64_t c0, int valid) {
  const typename T::V b = r.bias ? load<T, Partial>(r.bias + c0, valid) : T::zero();
#pragma GCC unroll 16
  for (int s = 0; s < S; ++s) acc[s] = b;
}

// Where a strip's activated vectors go. F32Out: the fp32 row r.dst [Wo, C]. The other output,
// depthwise_nhwc_avx512bf16.cpp's bf16 one, has the same static store(r, ox, c0, v, valid): pixel ox's
// channels [c0, c0 + W) (or `valid` of them when Partial). The activation before the store is activate
// above for both, its erf GELU T's own where T has one (the table GELUs: gelu_vec::erf_gelu_of).
template <class T>
struct F32Out {
  template <bool Partial>
  static void store(const DepthwiseRow& r, int64_t ox, int64_t c0, typename T::V v, int valid) {
    float* y = r.dst + ox * r.c + c0;
    if constexpr (Partial)
      T::storen(y, v, valid);
    else
      T::storeu(y, v);
  }
};

// Activation, then the S output vectors of a strip.
template <class T, class Out, int S, bool Partial>
inline void store_strip(const DepthwiseRow& r, typename T::V (&acc)[S], int64_t ox0, int64_t c0, int valid) {
  activate<T, S>(r.act, acc);
#pragma GCC unroll 16
  for (int s = 0; s < S; ++s) Out::template store<Partial>(r, ox0 + s, c0, acc[s], valid);
}

// S interior pixels ox0 .. ox0 + S - 1 (every tap inside the image), channels [c0, c0 + W) (or `valid` of
// them when Partial).
template <class T, class Out, int S, bool Partial>
inline void interior_strip(const DepthwiseRow& r, int64_t ox0, int64_t c0, int valid) {
  using V = typename T::V;
  V acc[S];
  start_strip<T, S, Partial>(r, acc, c0, valid);
  const int64_t step = r.stride_w * r.c;  // from one output pixel's tap to the next's
  for (int64_t ky = 0; ky < r.kh; ++ky) {
    const int64_t iy = r.oy * r.stride_h - r.pad_h + ky * r.dilation_h;
    if (iy < 0 || iy >= r.h) continue;
    const float* x0 = input_row(r, iy) + (ox0 * r.stride_w - r.pad_w) * r.c + c0;
    const float* w0 = r.wt + ky * r.kw * r.c + c0;
    for (int64_t kx = 0; kx < r.kw; ++kx) {
      const V wv = load<T, Partial>(w0 + kx * r.c, valid);
      const float* x = x0 + kx * r.dilation_w * r.c;
#pragma GCC unroll 16
      for (int s = 0; s < S; ++s) acc[s] = T::fma(load<T, Partial>(x + s * step, valid), wv, acc[s]);
    }
  }
  store_strip<T, Out, S, Partial>(r, acc, ox0, c0, valid);
}

// interior_strip for the models' 3×3 stride-1 undilated conv: the S + 2 input vectors under a kernel row are
// loaded once and shared by the three taps (instead of 3·S loads).
template <class T, class Out, int S, bool Partial>
inline void interior_strip_k3s1(const DepthwiseRow& r, int64_t ox0, int64_t c0, int valid) {
  using V = typename T::V;
  V acc[S];
  start_strip<T, S, Partial>(r, acc, c0, valid);
  for (int64_t ky = 0; ky < 3; ++ky) {
    const int64_t iy = r.oy * r.stride_h - r.pad_h + ky * r.dilation_h;
    if (iy < 0 || iy >= r.h) continue;
    const float* x = input_row(r, iy) + (ox0 - r.pad_w) * r.c + c0;
    const float* w = r.wt + ky * 3 * r.c + c0;
    const V w0 = load<T, Partial>(w, valid), w1 = load<T, Partial>(w + r.c, valid),
            w2 = load<T, Partial>(w + 2 * r.c, valid);
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) {
      acc[s] = T::fma(load<T, Partial>(x + s * r.c, valid), w0, acc[s]);
      acc[s] = T::fma(load<T, Partial>(x + (s + 1) * r.c, valid), w1, acc[s]);
      acc[s] = T::fma(load<T, Partial>(x + (s + 2) * r.c, valid), w2, acc[s]);
    }
  }
  store_strip<T, Out, S, Partial>(r, acc, ox0, c0, valid);
}

// One pixel with taps possibly outside the image (they read as zero).
template <class T, class Out, bool Partial>
inline void edge_pixel(const DepthwiseRow& r, int64_t ox, int64_t c0, int valid) {
  using V = typename T::V;
  V acc[1];
  start_strip<T, 1, Partial>(r, acc, c0, valid);
  for (int64_t ky = 0; ky < r.kh; ++ky) {
    const int64_t iy = r.oy * r.stride_h - r.pad_h + ky * r.dilation_h;
    if (iy < 0 || iy >= r.h) continue;
    for (int64_t kx = 0; kx < r.kw; ++kx) {
      const int64_t ix = ox * r.stride_w - r.pad_w + kx * r.dilation_w;
      if (ix < 0 || ix >= r.w) continue;
      const V wv = load<T, Partial>(r.wt + (ky * r.kw + kx) * r.c + c0, valid);
      acc[0] = T::fma(load<T, Partial>(input_row(r, iy) + ix * r.c + c0, valid), wv, acc[0]);
    }
  }
  store_strip<T, Out, 1, Partial>(r, acc, ox, c0, valid);
}

// Pixels [ox0, ox0 + n) of the interior, n <= S, over every channel vector.
template <class T, class Out, int S>
inline void strip_all_channels(const DepthwiseRow& r, int64_t ox0, int64_t n) {
  if constexpr (S > 1) {
    if (n < S) return strip_all_channels<T, Out, S - 1>(r, ox0, n);
  }
  constexpr int W = T::kWidth;
  const int64_t full = r.c / W * W;
  if (r.kh == 3 && r.kw == 3 && r.stride_w == 1 && r.dilation_w == 1 && r.dilation_h == 1) {
    for (int64_t c0 = 0; c0 < full; c0 += W) interior_strip_k3s1<T, Out, S, false>(r, ox0, c0, W);
    if (full < r.c) interior_strip_k3s1<T, Out, S, true>(r, ox0, full, static_cast<int>(r.c - full));
    return;
  }
  for (int64_t c0 = 0; c0 < full; c0 += W) interior_strip<T, Out, S, false>(r, ox0, c0, W);
  if (full < r.c) interior_strip<T, Out, S, true>(r, ox0, full, static_cast<int>(r.c - full));
}

template <class T, class Out>
inline void edge_all_channels(const DepthwiseRow& r, int64_t ox) {
  constexpr int W = T::kWidth;
  const int64_t full = r.c / W * W;
  for (int64_t c0 = 0; c0 < full; c0 += W) edge_pixel<T, Out, false>(r, ox, c0, W);
  if (full < r.c) edge_pixel<T, Out, true>(r, ox, full, static_cast<int>(r.c - full));
}

// One output row into Out (F32Out<T>: r.dst).
template <class T, int S, class Out = F32Out<T>>
void row(const DepthwiseRow& r) {
  // Interior: ox·sw - pw >= 0 and ox·sw - pw + (kw - 1)·dw <= W - 1.
  const int64_t lo = std::min(r.wo, (r.pad_w + r.stride_w - 1) / r.stride_w);
  const int64_t last_in = r.w - 1 + r.pad_w - (r.kw - 1) * r.dilation_w;
  const int64_t hi = last_in < 0 ? lo : std::max(lo, std::min(r.wo, last_in / r.stride_w + 1));
  for (int64_t ox = 0; ox < lo; ++ox) edge_all_channels<T, Out>(r, ox);
  for (int64_t ox = lo; ox < hi; ox += S) strip_all_channels<T, Out, S>(r, ox, std::min<int64_t>(S, hi - ox));
  for (int64_t ox = hi; ox < r.wo; ++ox) edge_all_channels<T, Out>(r, ox);
}

}  // namespace depthwise_impl
}  // namespace x86
}  // namespace vitrt
