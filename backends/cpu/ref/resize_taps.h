// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Resize's per-axis taps (core/ir/op_attrs.h, ResizeAttrs), shared by the reference and x86 kernels so that
// both compute the same float32 bits as PyTorch's CPU upsampling kernels (measured against torch 1.13:
// docs/onnx.md, Resize):
//   * the source coordinate is computed in double from the float step (PyTorch's float `scale` times the
//     double `o + 0.5`);
//   * linear: i0 = min(trunc(max(x, 0)), n − 1), i1 = i0 + 1 clamped, w1 = float(clamp(x − i0, 0, 1)),
//     w0 = 1 − w1 in float;
//   * cubic: i = floor(float(x)), t = float(x − i); Keys' weights in float with fused multiply-adds where
//     PyTorch's compiled kernel has them; taps i − 1 .. i + 2 clamped to the edge (ONNX's edge padding);
//     exclude_outside (ONNX only) drops the outside taps and renormalises in double;
//   * nearest: PyTorch's (ONNX's asymmetric + floor) is floor(float(step·o)); the other forms take ONNX's
//     reference coordinate (a division by the scale in double, so ties stay exact), rounded by the nearest
//     mode; both clamped to [0, n − 1];
//   * taps blend as resize_blend() does, the outer axis over the inner axes' blended values.
#include <cmath>
#include <cstdint>
#include <vector>

#include "ir/op_attrs.h"

namespace vitrt {
namespace ref {

struct ResizeAxisTaps {
  int taps = 1;                // per output position: 1 (nearest, a copied axis), 2 (linear), 4 (cubic)
  int64_t in = 0, out = 0;     // the axis's input and output lengths
  std::vector<int64_t> index;  // [out·taps] input positions, each in [0, in)
  std::vector<float> weight;   // [out·taps]
};

// The taps of resized axis `axis` (0 = the first of the resized axes) for an input length `in`.
void resize_axis_taps(const ResizeAttrs& a, int axis, int64_t in, ResizeAxisTaps* t);

// PyTorch's blend of `taps` values (its compiled kernel's fused multiply-adds): one tap is the value itself.
inline float resize_blend(const float* v, const float* w, int taps) {
  if (taps == 1) return v[0];
  float acc = std::fma(v[0], w[0], v[1] * w[1]);
  for (int j = 2; j < taps; ++j) acc = std::fma(v[j], w[j], acc);
  return acc;
}

}  // namespace ref
}  // namespace vitrt
