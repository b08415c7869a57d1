// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Pool2d's row kernel (simd.h, Pool2dRow), written once on xsimd batches and instantiated per ISA by
// simd_impl.h. Output columns whose window lies wholly inside the input's columns (the row's interior) are
// computed a vector of columns at a time: each tap is one load of W neighbouring columns (contiguous at
// stride 1, a gather otherwise); a longer interior's last vector ends at the interior's end, overlapping the
// one before. The columns at the edges, and an interior narrower than one vector, take the reference
// kernel's per-cell loop (backends/cpu/ref/pool2d.cpp). Max: padding never wins and a NaN does, as
// the reference; average: the interior sums in float (the reference in double).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <xsimd/xsimd.hpp>

#include "backends/cpu/x86/simd.h"

namespace vitrt {
namespace x86 {
namespace {
namespace pool2d_impl {

// The window's taps k along one axis whose position o·stride − pad + k·dilation lies in [0, in), and the
// window's size clipped to the padded input (count_include_pad's divisor along this axis).
struct AxisTaps {
  int64_t first = 0, end = 0, padded = 0;
};

inline AxisTaps axis_taps(int64_t o, int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                          int64_t pad_begin, int64_t pad_end) {
  AxisTaps t;
  const int64_t s = o * stride - pad_begin;
  t.first = s >= 0 ? 0 : (-s + dilation - 1) / dilation;
  if (s < in) {
    const int64_t last = (in - 1 - s) / dilation + 1;
    t.end = last < kernel ? last : kernel;
  }
  const int64_t e = s + kernel, limit = in + pad_end;
  t.padded = (e < limit ? e : limit) - s;
  return t;
}

// One output cell exactly as the reference kernel computes it.
inline float cell(const Pool2dRow& r, const AxisTaps& rows, int64_t ox) {
  const AxisTaps cols = axis_taps(ox, r.w, r.kernel_w, r.stride_w, r.dilation_w, r.pad_left, r.pad_right);
  const int64_t rs = r.oy * r.stride_h - r.pad_top, cs = ox * r.stride_w - r.pad_left;
  if (r.is_max) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t kr = rows.first; kr < rows.end; ++kr) {
      const float* row = r.src + (rs + kr * r.dilation_h) * r.w + cs;
      for (int64_t kc = cols.first; kc < cols.end; ++kc) {
        const float v = row[kc * r.dilation_w];
        if (v > m || v != v) m = v;  // once NaN, m stays NaN
      }
    }
    return m;
  }
  double sum = 0;
  for (int64_t kr = rows.first; kr < rows.end; ++kr)
    for (int64_t kc = cols.first; kc < cols.end; ++kc) sum += r.src[(rs + kr) * r.w + cs + kc];
  const int64_t count =
      r.count_include_pad ? rows.padded * cols.padded : (rows.end - rows.first) * (cols.end - cols.first);
  return static_cast<float>(sum / static_cast<double>(count));
}

// Output columns [ox, hi) of the row's interior, W at a time; returns the first column left undone.
// IsMax and Contiguous (stride 1) are template parameters so the tap loop holds no branch.
template <class A, bool IsMax, bool Contiguous>
int64_t interior(const Pool2dRow& r, const AxisTaps& rows, int64_t ox, int64_t hi) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<int32_t, A>;
  constexpr int64_t W = B::size;
  alignas(64) int32_t lane[W];
  for (int64_t l = 0; l < W; ++l) lane[l] = static_cast<int32_t>(l * r.stride_w);
  const I offsets = I::load_aligned(lane);
  const int64_t rs = r.oy * r.stride_h - r.pad_top;
  // An interior window's columns are all inside the input: the divisor is its rows' count times kernel_w.
  const B count(static_cast<float>((r.count_include_pad ? rows.padded : rows.end - rows.first) * r.kernel_w));
  // The last vector ends at hi, overlapping the one before (its columns are computed again, to the same
  // values) instead of leaving up to W - 1 columns to the per-cell loop, which cost more than the vectors.
  const int64_t start = ox;
  for (; ox < hi && hi - start >= W; ox = std::min(ox + W, hi)) {
    if (ox + W > hi) ox = hi - W;
    const int64_t cs = ox * r.stride_w - r.pad_left;
    B acc(IsMax ? -std::numeric_limits<float>::infinity() : 0.0f);
    auto nan = acc != acc;  // all false
    for (int64_t kr = rows.first; kr < rows.end; ++kr) {
      const float* base = r.src + (rs + kr * r.dilation_h) * r.w + cs;
      for (int64_t kc = 0; kc < r.kernel_w; ++kc) {
        const float* p = base + kc * r.dilation_w;
        const B v = Contiguous ? B::load_unaligned(p) : B::gather(p, offsets);
        if constexpr (IsMax) {
          acc = xsimd::max(acc, v);
          nan = nan | xsimd::isnan(v);
        } else {
          acc += v;
        }
      }
    }
    if constexpr (IsMax)
      acc = xsimd::select(nan, B(std::numeric_limits<float>::quiet_NaN()), acc);
    else
      acc /= count;
    acc.store_unaligned(r.dst + ox);
  }
  return ox;
}

// A strided max pool's interior with the window's rows taken first: the max over the rows of each input
// column the interior reads (contiguous loads, a vector of columns at a time) into a row on the stack, then
// the window's columns over that one row: kernel_w gathers per vector of outputs instead of kernel_h ·
// kernel_w (ResNet's 3×3/2 MaxPool: 3 instead of 9). A NaN in a column stays NaN through both passes, as in
// interior(). Returns the first column left undone (ox itself when the row is too short or too wide for
// this).
constexpr int64_t kMaxRowFloats = 4096;

template <class A>
int64_t interior_max_rows_first(const Pool2dRow& r, const AxisTaps& rows, int64_t ox, int64_t hi) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<int32_t, A>;
  constexpr int64_t W = B::size;
  // Input columns [c0, c1) of the outputs [ox, hi).
  const int64_t c0 = ox * r.stride_w - r.pad_left;
  const int64_t c1 = (hi - 1) * r.stride_w - r.pad_left + (r.kernel_w - 1) * r.dilation_w + 1;
  if (hi - ox < W || c1 - c0 < W || c1 - c0 > kMaxRowFloats) return ox;
  alignas(64) float tmp[kMaxRowFloats];
  const int64_t rs = r.oy * r.stride_h - r.pad_top;
  const B nan_value(std::numeric_limits<float>::quiet_NaN());
  for (int64_t c = c0; c < c1; c = std::min(c + W, c1)) {
    if (c + W > c1) c = c1 - W;  // the last vector overlaps the one before
    B acc(-std::numeric_limits<float>::infinity());
    auto nan = acc != acc;  // all false
    for (int64_t kr = rows.first; kr < rows.end; ++kr) {
      const B v = B::load_unaligned(r.src + (rs + kr * r.dilation_h) * r.w + c);
      acc = xsimd::max(acc, v);
      nan = nan | xsimd::isnan(v);
    }
    xsimd::select(nan, nan_value, acc).store_unaligned(tmp + (c - c0));
  }
  alignas(64) int32_t lane[W];
  for (int64_t l = 0; l < W; ++l) lane[l] = static_cast<int32_t>(l * r.stride_w);
  const I offsets = I::load_aligned(lane);
  const int64_t start = ox;
  for (; ox < hi; ox = std::min(ox + W, hi)) {
    if (ox + W > hi) ox = hi - W;  // overlapping last vector, as in interior()
    const float* base = tmp + (ox - start) * r.stride_w;
    B acc(-std::numeric_limits<float>::infinity());
    auto nan = acc != acc;
    for (int64_t kc = 0; kc < r.kernel_w; ++kc) {
      const B v = B::gather(base + kc * r.dilation_w, offsets);
      acc = xsimd::max(acc, v);
      nan = nan | xsimd::isnan(v);
    }
    xsimd::select(nan, nan_value, acc).store_unaligned(r.dst + ox);
  }
  return ox;
}

template <class A>
void row(const Pool2dRow& r) {
  constexpr int64_t W = xsimd::batch<float, A>::size;
  const AxisTaps rows = axis_taps(r.oy, r.h, r.kernel_h, r.stride_h, r.dilation_h, r.pad_top, r.pad_bottom);
  // Interior columns [lo, hi): the first and last tap inside the input.
  const int64_t span = (r.kernel_w - 1) * r.dilation_w;
  const int64_t lo = (r.pad_left + r.stride_w - 1) / r.stride_w;
  const int64_t room = r.w - 1 - span + r.pad_left;
  int64_t hi = room < 0 ? 0 : room / r.stride_w + 1;
  if (hi > r.wo) hi = r.wo;
  int64_t ox = 0;
  for (; ox < lo && ox < r.wo; ++ox) r.dst[ox] = cell(r, rows, ox);
  // Gathers address at most stride·(W−1) floats past a vector's first tap: int32 offsets suffice for any
  // sane row; a wider stride takes the per-cell loop. A row of padding only (a dilated max) does too.
  if (r.stride_w * W < (int64_t{1} << 30) && rows.end > rows.first) {
    const bool contiguous = r.stride_w == 1;
    if (r.is_max && !contiguous && rows.end - rows.first > 1)
      ox = interior_max_rows_first<A>(r, rows, ox, hi);
    if (r.is_max)
      ox = contiguous ? interior<A, true, true>(r, rows, ox, hi) : interior<A, true, false>(r, rows, ox, hi);
    else
      ox =
          contiguous ? interior<A, false, true>(r, rows, ox, hi) : interior<A, false, false>(r, rows, ox, hi);
  }
  for (; ox < r.wo; ++ox) r.dst[ox] = cell(r, rows, ox);
}

}  // namespace pool2d_impl
}  // namespace
}  // namespace x86
}  // namespace vitrt
