// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The image-layout depthwise plane kernel, written once over an ISA's vector ops T (vec_avx512.h,
// vec_avx2.h). A task first copies the input rows it reads into its scratch, zero-padded and, for a stride s,
// split into s phases (depthwise_nchw.h): every tap of every output row then reads W consecutive output
// columns as one unaligned vector load, whatever the stride, padding or dilation, and no tap is checked
// against the image's edges. A block of R output rows × S vectors keeps R·S accumulators in registers (8
// where the row is wide enough, so that the FMA latency is hidden) and broadcasts each tap's weight once for
// all of them; narrow rows (ConvNeXt's and MobileNet's 7×7 and 14×14 planes) stack more rows per block
// instead of wasting lanes on more vectors. The row's last vector is stored masked.
#include <algorithm>

#include "backends/cpu/x86/depthwise_nchw.h"
#include "backends/cpu/x86/depthwise_nhwc_impl.h"  // depthwise_impl::activate

namespace vitrt {
namespace x86 {
namespace depthwise_nchw_impl {

// Phase `ph` of one padded input row, `n` (a multiple of W) floats: dst[j] = x[j·stride] for j in [lo, hi)
// (the row's columns: x = row + ph - pad_w), zero elsewhere. Strides 1 and 2 (every model's) copy whole
// vectors, masked at the row's ends (the loads never leave the row); stride 2 keeps the even lanes of two
// vectors (E::even, the ISA's deinterleave).
template <class T, class E>
inline void fill_phase(const float* x, int64_t w_left, int64_t stride, int64_t lo, int64_t hi, int64_t n,
                       float* dst) {
  constexpr int W = T::kWidth;
  for (int64_t j = 0; j < n; j += W) T::storeu(dst + j, T::zero());
  if (stride == 1) {
    int64_t j = lo;
    for (; j + W <= hi; j += W) T::storeu(dst + j, T::loadu(x + j));
    if (j < hi) T::storen(dst + j, T::loadn(x + j, static_cast<int>(hi - j)), static_cast<int>(hi - j));
  } else if (stride == 2) {
    for (int64_t j = lo; j < hi; j += W) {
      const int64_t avail = w_left - 2 * j;  // row floats from x + 2j on
      const int cnt = static_cast<int>(std::min<int64_t>(W, hi - j));
      typename T::V v;
      if (avail >= 2 * W) {
        v = E::even(T::loadu(x + 2 * j), T::loadu(x + 2 * j + W));
      } else {
        v = E::even(T::loadn(x + 2 * j, static_cast<int>(std::min<int64_t>(W, avail))),
                    T::loadn(x + 2 * j + W, static_cast<int>(std::clamp<int64_t>(avail - W, 0, W))));
      }
      if (cnt == W)
        T::storeu(dst + j, v);
      else
        T::storen(dst + j, v, cnt);
    }
  } else {
    for (int64_t j = lo; j < hi; ++j) dst[j] = x[j * stride];
  }
}

// Padded rows [pr0, pr0 + rows) (padded row pr is input row pr - pad_h) into the scratch.
template <class T, class E>
inline void fill_rows(const DepthwisePlane& p, int64_t pr0, int64_t rows) {
  const int64_t lp = p.phase_floats, sw = p.stride_w, row_floats = sw * lp;
  for (int64_t ph = 0; ph < sw; ++ph) {
    // j in [lo, hi) reads the row: 0 <= j·sw + ph - pad_w < w (the same for every row).
    const int64_t lo = std::min(lp, std::max<int64_t>(0, (p.pad_w - ph + sw - 1) / sw));
    const int64_t hi = std::max(lo, std::min(lp, (p.w + p.pad_w - ph + sw - 1) / sw));
    const int64_t w_left = p.w - (ph - p.pad_w);  // row floats from x on
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t iy = pr0 + r - p.pad_h;
      float* dst = p.scratch + r * row_floats + ph * lp;
      if (iy < 0 || iy >= p.h) {
        for (int64_t j = 0; j < lp; j += T::kWidth) T::storeu(dst + j, T::zero());
      } else {
        fill_phase<T, E>(p.src + iy * p.w + ph - p.pad_w, w_left, sw, lo, hi, lp, dst);
      }
    }
  }
}

// Output rows oy .. oy + R - 1, columns ox0 .. ox0 + S·W - 1 of which the last vector has `last` valid.
template <class T, int R, int S>
inline void block(const DepthwisePlane& p, int64_t pr0, int64_t oy, int64_t ox0, int last) {
  using V = typename T::V;
  constexpr int W = T::kWidth;
  V acc[R * S];
  const V b = T::set1(p.bias);
#pragma GCC unroll 32
  for (int i = 0; i < R * S; ++i) acc[i] = b;
  const int64_t sh = p.stride_h, sw = p.stride_w, dh = p.dilation_h, dw = p.dilation_w;
  const int64_t lp = p.phase_floats, row_floats = sw * lp;
  // Kernel rows that reach the image for at least one of the R rows; the others read zero rows.
  const int64_t top = p.pad_h - (oy + R - 1) * sh;  // ky·dh >= top
  const int64_t ky_lo = top <= 0 ? 0 : (top + dh - 1) / dh;
  const int64_t bottom = p.h - 1 + p.pad_h - oy * sh;  // ky·dh <= bottom
  const int64_t ky_hi = bottom < 0 ? 0 : std::min(p.kh, bottom / dh + 1);
  for (int64_t ky = ky_lo; ky < ky_hi; ++ky) {
    const float* x = p.scratch + (oy * sh + ky * dh - pr0) * row_floats + ox0;
    const float* wk = p.wt + ky * p.kw;
    int64_t phase = 0, off = 0;  // tap kx reads phase (kx·dw) mod sw at offset (kx·dw) div sw
    for (int64_t kx = 0; kx < p.kw; ++kx) {
      const V wv = T::set1(wk[kx]);
      const float* xt = x + phase * lp + off;
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
        for (int s = 0; s < S; ++s)
          acc[r * S + s] = T::fma(T::loadu(xt + r * sh * row_floats + s * W), wv, acc[r * S + s]);
      }
      phase += dw;
      while (phase >= sw) {
        phase -= sw;
        ++off;
      }
    }
  }
  depthwise_impl::activate<T, R * S>(p.act, acc);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* y = p.dst + (oy + r) * p.wo + ox0;
#pragma GCC unroll 8
    for (int s = 0; s < S - 1; ++s) T::storeu(y + s * W, acc[r * S + s]);
    if (last == W)
      T::storeu(y + (S - 1) * W, acc[r * S + S - 1]);
    else
      T::storen(y + (S - 1) * W, acc[r * S + S - 1], last);
  }
}

// The row's last `nv` (< S) vectors.
template <class T, int R, int S>
inline void tail_block(const DepthwisePlane& p, int64_t pr0, int64_t oy, int64_t ox0, int nv, int last) {
  if constexpr (S > 1) {
    if (nv == S) return block<T, R, S>(p, pr0, oy, ox0, last);
    return tail_block<T, R, S - 1>(p, pr0, oy, ox0, nv, last);
  } else {
    block<T, R, 1>(p, pr0, oy, ox0, last);
  }
}

// R whole output rows from oy.
template <class T, int R, int S>
inline void row_block(const DepthwisePlane& p, int64_t pr0, int64_t oy) {
  constexpr int W = T::kWidth;
  int64_t ox0 = 0;
  for (; ox0 + S * W <= p.wo; ox0 += S * W) block<T, R, S>(p, pr0, oy, ox0, W);
  const int64_t rem = p.wo - ox0;
  if (rem > 0) {
    const int nv = static_cast<int>((rem + W - 1) / W);
    tail_block<T, R, S>(p, pr0, oy, ox0, nv, static_cast<int>(rem - (nv - 1) * W));
  }
}

// R whole output rows from oy, for a run-time R in [1, Rmax].
template <class T, int Rmax, int S>
inline void row_block_of(const DepthwisePlane& p, int64_t pr0, int64_t oy, int r) {
  if constexpr (Rmax > 1) {
    if (r < Rmax) return row_block_of<T, Rmax - 1, S>(p, pr0, oy, r);
  }
  row_block<T, Rmax, S>(p, pr0, oy);
}

// The task's output rows in equal blocks of at most Rmax rows (a 7-row plane is one block of 7, not 4 + 2 +
// 1: a block of few rows has few accumulators, and its chain of dependent FMAs, one per tap, sets its pace).
template <class T, int Rmax, int S>
inline void rows_in_blocks(const DepthwisePlane& p, int64_t pr0) {
  const int64_t n = p.oy1 - p.oy0, blocks = (n + Rmax - 1) / Rmax, r = (n + blocks - 1) / blocks;
  for (int64_t oy = p.oy0; oy < p.oy1; oy += r)
    row_block_of<T, Rmax, S>(p, pr0, oy, static_cast<int>(std::min(r, p.oy1 - oy)));
}

// E::even(a, b): the even lanes of a then those of b (a stride-2 deinterleave).
template <class T, class E>
void rows(const DepthwisePlane& p) {
  constexpr int W = T::kWidth;
  const int64_t pr0 = p.oy0 * p.stride_h;
  fill_rows<T, E>(p, pr0, (p.oy1 - 1 - p.oy0) * p.stride_h + (p.kh - 1) * p.dilation_h + 1);
  const int64_t nv = (p.wo + W - 1) / W;  // vectors per output row
  if (nv >= 4)
    rows_in_blocks<T, 2, 4>(p, pr0);
  else if (nv == 3)
    rows_in_blocks<T, 2, 3>(p, pr0);
  else if (nv == 2)
    rows_in_blocks<T, 4, 2>(p, pr0);
  else
    rows_in_blocks<T, 8, 1>(p, pr0);
}

}  // namespace depthwise_nchw_impl
}  // namespace x86
}  // namespace vitrt
