// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Resize's per-axis taps: the rules are in resize_taps.h.
#include "backends/cpu/ref/resize_taps.h"

#include <algorithm>

namespace vitrt {
namespace ref {
namespace {

// The source coordinate of output position o (core/ir/op_attrs.h, ResizeAttrs), in double from the float
// step.
double source_coordinate(ResizeCoordinate c, double step, int64_t o, int64_t out) {
  const double x = static_cast<double>(o);
  switch (c) {
    case ResizeCoordinate::kHalfPixel:
      return step * (x + 0.5) - 0.5;
    case ResizeCoordinate::kPytorchHalfPixel:
      return out > 1 ? step * (x + 0.5) - 0.5 : 0.0;
    case ResizeCoordinate::kAlignCorners:
    case ResizeCoordinate::kAsymmetric:
      return step * x;
    case ResizeCoordinate::kTfHalfPixelForNn:
      return step * (x + 0.5);
  }
  return 0.0;
}

// ONNX's reference coordinate for nearest (onnx/backend/test/case/node/resize.py): divides by the scale in
// double, so that exact ties stay exact.
double onnx_coordinate(ResizeCoordinate c, double scale, int64_t in, int64_t o, int64_t out) {
  const double x = static_cast<double>(o);
  switch (c) {
    case ResizeCoordinate::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case ResizeCoordinate::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoordinate::kAlignCorners: {
      const double length = scale * static_cast<double>(in);
      return length == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (length - 1.0);
    }
    case ResizeCoordinate::kAsymmetric:
      return x / scale;
    case ResizeCoordinate::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
  }
  return 0.0;
}

int64_t clamp_index(int64_t i, int64_t n) {
  return std::min(std::max(i, int64_t{0}), n - 1);
}

// An integral double as an index, first kept within [lo, hi]: a file's step may be as large as a float
// gets, and converting an out-of-range double is undefined.
int64_t index_within(double v, int64_t lo, int64_t hi) {
  if (!(v >= static_cast<double>(lo))) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(v);
}

// The nearest index of x in [0, n - 1].
int64_t nearest_index(ResizeNearest mode, double x, int64_t n) {
  const double r = std::floor(x), d = x - r;  // d exact: x and r share their exponent range
  double v = r;
  switch (mode) {
    case ResizeNearest::kRoundPreferFloor:
      v = d > 0.5 ? r + 1.0 : r;
      break;
    case ResizeNearest::kRoundPreferCeil:
      v = d >= 0.5 ? r + 1.0 : r;
      break;
    case ResizeNearest::kFloor:
      break;
    case ResizeNearest::kCeil:
      v = std::ceil(x);
      break;
  }
  return index_within(v, 0, n - 1);
}

// Keys' cubic convolution, the two halves of its support, written as PyTorch's
// cubic_convolution1/2 are compiled (fused where its kernel fuses).
float cubic_near(float x, float a) {  // |x| <= 1
  const float r = std::fma(a + 2.0f, x, -(a + 3.0f)) * x;
  return r * x + 1.0f;
}
float cubic_far(float x, float a) {  // 1 < |x| < 2
  float r = std::fma(a, x, -(5.0f * a));
  r = std::fma(r, x, 8.0f * a);
  return r * x - 4.0f * a;
}

}  // namespace

void resize_axis_taps(const ResizeAttrs& a, int axis, int64_t in, ResizeAxisTaps* t) {
  const int64_t out = a.sizes[static_cast<size_t>(axis)];
  const float step = a.steps[static_cast<size_t>(axis)];
  t->in = in;
  t->out = out;
  // PyTorch copies an axis whose length does not change; so does this where the coordinates do not either
  // (a length-1 axis has only one).
  const bool copied =
      in == out && (in == 1 || (step == 1.0f && a.coordinate != ResizeCoordinate::kTfHalfPixelForNn));
  t->taps = copied || a.mode == ResizeMode::kNearest ? 1 : a.mode == ResizeMode::kLinear ? 2 : 4;
  t->index.assign(static_cast<size_t>(out * t->taps), 0);
  t->weight.assign(static_cast<size_t>(out * t->taps), 1.0f);
  for (int64_t o = 0; o < out; ++o) {
    int64_t* idx = t->index.data() + o * t->taps;
    float* w = t->weight.data() + o * t->taps;
    if (copied) {
      idx[0] = o;
      continue;
    }
    if (a.mode == ResizeMode::kNearest) {
      // PyTorch's nearest: floor(float(step·o)); the other forms as ONNX's reference.
      const bool torch = a.coordinate == ResizeCoordinate::kAsymmetric && a.nearest == ResizeNearest::kFloor;
      const double x =
          torch ? static_cast<double>(static_cast<float>(static_cast<double>(step) * static_cast<double>(o)))
                : onnx_coordinate(a.coordinate, a.scales[static_cast<size_t>(axis)], in, o, out);
      idx[0] = nearest_index(a.nearest, x, in);
      continue;
    }
    const double x = source_coordinate(a.coordinate, step, o, out);
    if (a.mode == ResizeMode::kLinear) {
      const double xc = x < 0.0 ? 0.0 : x;
      const int64_t i0 = index_within(std::trunc(xc), 0, in - 1);
      const float w1 = static_cast<float>(std::min(std::max(xc - static_cast<double>(i0), 0.0), 1.0));
      idx[0] = i0;
      idx[1] = i0 + (i0 < in - 1 ? 1 : 0);
      w[0] = 1.0f - w1;
      w[1] = w1;
    } else {
      // Far outside the input every tap is an edge one: i is kept within [-3, n + 2] and the edge taken
      // whole.
      const double fl = std::floor(static_cast<float>(x));
      const int64_t i = index_within(fl, -3, in + 2);
      const float f = static_cast<double>(i) == fl ? static_cast<float>(x - fl) : 0.0f, g = 1.0f - f;
      w[0] = cubic_far(f + 1.0f, a.cubic_a);
      w[1] = cubic_near(f, a.cubic_a);
      w[2] = cubic_near(g, a.cubic_a);
      w[3] = cubic_far(g + 1.0f, a.cubic_a);
      double sum = 0.0;
      for (int j = 0; j < 4; ++j) {
        const int64_t raw = i - 1 + j;
        if (a.exclude_outside && (raw < 0 || raw >= in)) w[j] = 0.0f;
        sum += w[j];
        idx[j] = clamp_index(raw, in);
      }
      if (a.exclude_outside && sum != 0.0)
        for (int j = 0; j < 4; ++j) w[j] = static_cast<float>(w[j] / sum);
    }
  }
}

}  // namespace ref
}  // namespace vitrt
