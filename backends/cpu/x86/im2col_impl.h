// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// im2col.h's panel packer, written once over an ISA's masked vector operations (T below: Ops512 in
// im2col_avx512.cpp, Ops256 in im2col_avx2.cpp).
#include <immintrin.h>

#include <algorithm>

#include "backends/cpu/x86/im2col.h"

namespace vitrt {
namespace x86 {
namespace im2col_impl {

// A run of output pixels on one output row of one image: columns [j0, j0 + len) of the panel, output x from
// ox0.
struct Run {
  const float* x;  // the image's first input channel of the group
  int64_t oy, ox0, j0, len;
};

constexpr int kMaxRuns = 64;  // panels are at most 64 pixels wide, so one pixel per run at worst

// A pointwise conv (1 × 1, stride 1, no padding) reads each input channel's plane as it is: a panel's columns
// are one contiguous run per image it touches, not one per output row.
template <class T>
void pointwise_panel(const Im2colPanel& p) {
  const int64_t plane = p.h * p.w;  // = p.pix
  for (int64_t j = 0; j < p.cols;) {
    const int64_t b = (p.first + j) / p.pix, q = (p.first + j) % p.pix, len = std::min(p.cols - j, p.pix - q);
    const float* src = p.x + b * p.image_stride + q;
    for (int64_t c = 0; c < p.cin; ++c) T::copy(p.dst + c * p.nr + j, src + c * plane, len);
    j += len;
  }
  if (p.cols < p.nr)
    for (int64_t c = 0; c < p.cin; ++c) T::zero(p.dst + c * p.nr + p.cols, p.nr - p.cols);
}

// One (ky, kx, run) of a panel, the same in every input channel: worked out once per panel instead of once
// per channel (a 3 × 3 conv's panel has 9 · cin rows but only 9 · runs pieces).
struct Piece {
  int64_t src;  // offset from channel 0's plane of the run's pixel `lo`; -1: the whole run is padding
  int64_t j0, len, lo, hi;  // columns [j0, j0 + len) of the panel; pixels [lo, hi) of it read, the rest zero
};

constexpr int kMaxPieces = 640;  // 15 KB of stack: a 3 × 3 kernel over 64 one-pixel runs fits

template <class T>
void pieces_panel(const Im2colPanel& p, const Run* runs, int nruns) {
  Piece pieces[kMaxPieces];
  const int64_t sw = p.stride_w, taps = p.kh * p.kw;
  for (int64_t ky = 0; ky < p.kh; ++ky)
    for (int64_t kx = 0; kx < p.kw; ++kx)
      for (int r = 0; r < nruns; ++r) {
        const Run& run = runs[r];
        Piece& pc = pieces[(ky * p.kw + kx) * nruns + r];
        pc.j0 = run.j0;
        pc.len = run.len;
        const int64_t iy = run.oy * p.stride_h - p.pad_h + ky * p.dil_h;
        if (iy < 0 || iy >= p.h) {
          pc.src = -1;
          continue;
        }
        // Input x of the run's t-th pixel: ix0 + t·sw; in the image for t in [lo, hi).
        const int64_t ix0 = run.ox0 * sw - p.pad_w + kx * p.dil_w;
        pc.lo = ix0 >= 0 ? 0 : std::min(run.len, (-ix0 + sw - 1) / sw);
        pc.hi = ix0 >= p.w ? pc.lo : std::max(pc.lo, std::min(run.len, (p.w - 1 - ix0) / sw + 1));
        pc.src = (run.x - p.x) + iy * p.w + (ix0 + pc.lo * sw);
      }
  const int64_t plane = p.h * p.w;
  for (int64_t c = 0; c < p.cin; ++c) {
    const float* x = p.x + c * plane;
    for (int64_t kk = 0; kk < taps; ++kk) {
      float* dst = p.dst + (c * taps + kk) * p.nr;
      const Piece* pc = pieces + kk * nruns;
      for (int r = 0; r < nruns; ++r) {
        float* d = dst + pc[r].j0;
        if (pc[r].src < 0) {
          T::zero(d, pc[r].len);
          continue;
        }
        const int64_t lo = pc[r].lo, hi = pc[r].hi;
        if (lo > 0) T::zero(d, lo);
        if (sw == 1)
          T::copy(d + lo, x + pc[r].src, hi - lo);
        else
          T::gather(d + lo, x + pc[r].src, sw, hi - lo);
        if (hi < pc[r].len) T::zero(d + hi, pc[r].len - hi);
      }
      if (p.cols < p.nr) T::zero(dst + p.cols, p.nr - p.cols);
    }
  }
}

template <class T>
void panel(const Im2colPanel& p) {
  if (p.kh == 1 && p.kw == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 && p.pad_w == 0 &&
      p.w == p.wo)
    return pointwise_panel<T>(p);
  Run runs[kMaxRuns];
  int nruns = 0;
  for (int64_t j = 0; j < p.cols && nruns < kMaxRuns;) {
    const int64_t b = (p.first + j) / p.pix, q = (p.first + j) % p.pix, oy = q / p.wo, ox = q % p.wo;
    const int64_t len = std::min(p.cols - j, p.wo - ox);
    runs[nruns++] = Run{p.x + b * p.image_stride, oy, ox, j, len};
    j += len;
  }
  const int64_t sw = p.stride_w;
  if (p.kh * p.kw * nruns <= kMaxPieces) return pieces_panel<T>(p, runs, nruns);
  for (int64_t c = 0; c < p.cin; ++c) {
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        float* dst = p.dst + ((c * p.kh + ky) * p.kw + kx) * p.nr;
        for (int r = 0; r < nruns; ++r) {
          const Run& run = runs[r];
          float* d = dst + run.j0;
          const int64_t iy = run.oy * p.stride_h - p.pad_h + ky * p.dil_h;
          if (iy < 0 || iy >= p.h) {
            T::zero(d, run.len);
            continue;
          }
          // Input x of the run's t-th pixel: ix0 + t·sw; in the image for t in [lo, hi).
          const int64_t ix0 = run.ox0 * sw - p.pad_w + kx * p.dil_w;
          const int64_t lo = ix0 >= 0 ? 0 : std::min(run.len, (-ix0 + sw - 1) / sw);
          const int64_t hi = ix0 >= p.w ? lo : std::max(lo, std::min(run.len, (p.w - 1 - ix0) / sw + 1));
          if (lo > 0) T::zero(d, lo);
          const float* src = run.x + (c * p.h + iy) * p.w + (ix0 + lo * sw);
          if (sw == 1)
            T::copy(d + lo, src, hi - lo);
          else
            T::gather(d + lo, src, sw, hi - lo);
          if (hi < run.len) T::zero(d + hi, run.len - hi);
        }
        if (p.cols < p.nr) T::zero(dst + p.cols, p.nr - p.cols);
      }
    }
  }
}

}  // namespace im2col_impl
}  // namespace x86
}  // namespace vitrt
