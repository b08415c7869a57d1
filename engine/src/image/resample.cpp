// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// resize_pil: Pillow's resampling, re-implemented to be bit-exact with PIL 9.4's Image.resize on 8-bit
// images.
//
// Bilinear / bicubic (Pillow's convolution resampler):
//  * Separable. A horizontal pass runs only if the width changes, then a vertical pass only if the height
//    changes; the intermediate image is clipped to uint8 in between.
//  * For an output index i on an axis of `in` -> `out` samples: scale = in / out; the filter is stretched by
//    fs = max(scale, 1) (antialiasing when downscaling) so its support is support * fs; the centre is
//    (i + 0.5) * scale and the taps are the inputs j in [int(centre - support + 0.5), int(centre + support +
//    0.5)) clipped to the image, weighted by filter((j - centre + 0.5) / fs), then divided by their sum.
//  * Weights become fixed point with 22 fraction bits (32 - 8 - 2: room for 8-bit data and some headroom),
//    rounded half away from zero and truncated to int; sums start at 2^21 (rounding) and are shifted right by
//    22 and clipped to [0, 255].
//  * bilinear: triangle of support 1; bicubic: Keys' cubic with a = -0.5, support 2.
// Nearest: PIL resizes with its affine nearest-neighbour scaler: the source coordinate of output column x is
//   accumulated as x0 = scale * 0.5, x_{i+1} = x_i + scale (in double, by repeated addition, which matters at
//   exact boundaries) and truncated to int; rows likewise.
// The float expressions below keep the operation order of that algorithm; contraction into FMA is disabled so
// that builds with -march flags still round every step as the reference does.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "image/decoders.h"
#include "image/image.h"

namespace vitrt {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

struct Filter {
  double (*weight)(double);
  double support;
};

double bilinear_weight(double x) {
  if (x < 0.0) x = -x;
  if (x < 1.0) return 1.0 - x;
  return 0.0;
}

double bicubic_weight(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// Fixed-point taps for outputs [i0, i0 + n) of one axis: output i0 + i reads count[i] inputs from first[i]
// with weights w[i * ksize + k]. Each output's taps depend only on its own index, so a window's taps are the
// same numbers as the whole axis's.
struct AxisTaps {
  int ksize = 0;
  std::vector<int> first, count;
  std::vector<int32_t> w;
};

void compute_taps(int in_size, int out_size, const Filter& f, int i0, int n_out, AxisTaps* t) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = f.support * filterscale;
  const int ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  t->ksize = ksize;
  t->first.assign(n_out, 0);
  t->count.assign(n_out, 0);
  t->w.assign(static_cast<size_t>(n_out) * ksize, 0);
  std::vector<double> k(ksize);
  for (int o = 0; o < n_out; ++o) {
    const int i = i0 + o;
    const double center = (i + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int lo = static_cast<int>(center - support + 0.5);
    if (lo < 0) lo = 0;
    int hi = static_cast<int>(center + support + 0.5);
    if (hi > in_size) hi = in_size;
    const int n = hi - lo;
    double sum = 0.0;
    for (int j = 0; j < n; ++j) {
      const double wt = f.weight((j + lo - center + 0.5) * ss);
      k[j] = wt;
      sum += wt;
    }
    int32_t* out = &t->w[static_cast<size_t>(o) * ksize];
    for (int j = 0; j < n; ++j) {
      const double v = sum != 0.0 ? k[j] / sum : k[j];
      out[j] = v < 0 ? static_cast<int32_t>(-0.5 + v * (1 << kPrecisionBits))
                     : static_cast<int32_t>(0.5 + v * (1 << kPrecisionBits));
    }
    t->first[o] = lo;
    t->count[o] = n;
  }
}

inline uint8_t clip8(int64_t acc) {
  if (acc < 0) return 0;
  const int64_t v = acc >> kPrecisionBits;
  return static_cast<uint8_t>(v > 255 ? 255 : v);
}

// Horizontal pass over source rows [row0, row0 + rows) into dst (rows x out_w).
void resample_rows(const Image& src, int row0, int rows, const AxisTaps& t, int out_w, uint8_t* dst) {
  const int c = src.channels;
  const int64_t half = int64_t{1} << (kPrecisionBits - 1);
  for (int y = 0; y < rows; ++y) {
    const uint8_t* in = src.pixels.data() + static_cast<size_t>(row0 + y) * src.width * c;
    uint8_t* out = dst + static_cast<size_t>(y) * out_w * c;
    for (int x = 0; x < out_w; ++x) {
      const int32_t* k = &t.w[static_cast<size_t>(x) * t.ksize];
      const uint8_t* p = in + static_cast<size_t>(t.first[x]) * c;
      for (int ch = 0; ch < c; ++ch) {
        int64_t acc = half;
        for (int j = 0; j < t.count[x]; ++j) acc += static_cast<int64_t>(p[j * c + ch]) * k[j];
        out[x * c + ch] = clip8(acc);
      }
    }
  }
}

// Vertical pass over row_bytes bytes of each row: src rows are src_stride bytes apart and offset by row0
// relative to the taps' coordinates; dst rows are row_bytes apart.
void resample_cols(const uint8_t* src, size_t src_stride, size_t row_bytes, int row0, const AxisTaps& t,
                   int out_h, uint8_t* dst) {
  const int64_t half = int64_t{1} << (kPrecisionBits - 1);
  std::vector<int64_t> acc(row_bytes);
  for (int y = 0; y < out_h; ++y) {
    const int32_t* k = &t.w[static_cast<size_t>(y) * t.ksize];
    std::fill(acc.begin(), acc.end(), half);
    for (int j = 0; j < t.count[y]; ++j) {
      const uint8_t* in = src + static_cast<size_t>(t.first[y] - row0 + j) * src_stride;
      const int64_t kj = k[j];
      for (size_t i = 0; i < row_bytes; ++i) acc[i] += in[i] * kj;
    }
    uint8_t* out = dst + static_cast<size_t>(y) * row_bytes;
    for (size_t i = 0; i < row_bytes; ++i) out[i] = clip8(acc[i]);
  }
}

// PIL's nearest-neighbour source index of outputs [i0, i0 + n) on an axis of in -> out samples (-1: outside
// the source). The position is accumulated from output 0 by repeated addition, as PIL does, so a window's
// indices are the whole axis's.
std::vector<int> nearest_indices(int in_size, int out_size, int i0, int n) {
  const double scale = static_cast<double>(in_size) / out_size;
  std::vector<int> idx(n, -1);
  double pos = scale * 0.5;  // PIL: COORD(v) = v < 0 ? -1 : (int)v
  for (int i = 0; i < i0 + n; ++i, pos += scale) {
    if (i < i0) continue;
    const int v = pos < 0.0 ? -1 : static_cast<int>(pos);
    if (v >= 0 && v < in_size) idx[i - i0] = v;
  }
  return idx;
}

void resize_nearest(const Image& src, int out_w, int out_h, const PixelWindow& win, Image* dst) {
  const int c = src.channels;
  const std::vector<int> xin = nearest_indices(src.width, out_w, win.x, win.w);
  const std::vector<int> yin = nearest_indices(src.height, out_h, win.y, win.h);
  for (int y = 0; y < win.h; ++y) {
    uint8_t* out = dst->pixels.data() + static_cast<size_t>(y) * win.w * c;
    if (yin[y] < 0) {  // positions outside the source are filled with 0
      std::memset(out, 0, static_cast<size_t>(win.w) * c);
      continue;
    }
    const uint8_t* in = src.pixels.data() + static_cast<size_t>(yin[y]) * src.width * c;
    for (int x = 0; x < win.w; ++x) {
      for (int ch = 0; ch < c; ++ch) out[x * c + ch] = xin[x] < 0 ? 0 : in[xin[x] * c + ch];
    }
  }
}

Status resize_impl(const Image& src, int out_w, int out_h, Interpolation interp, const PixelWindow& win,
                   Image* dst) {
  VITRT_RETURN_IF_ERROR(image_internal::allocate_image(win.w, win.h, src.channels, dst, "resize"));
  const int c = src.channels;
  if (interp == Interpolation::kNearest) {
    resize_nearest(src, out_w, out_h, win, dst);
    return Status::Ok();
  }
  const Filter filter =
      interp == Interpolation::kBilinear ? Filter{bilinear_weight, 1.0} : Filter{bicubic_weight, 2.0};
  const bool need_h = out_w != src.width;
  const bool need_v = out_h != src.height;
  const size_t src_stride = static_cast<size_t>(src.width) * c;
  const size_t row_bytes = static_cast<size_t>(win.w) * c;
  AxisTaps th, tv;
  if (need_h) compute_taps(src.width, out_w, filter, win.x, win.w, &th);
  if (need_v) compute_taps(src.height, out_h, filter, win.y, win.h, &tv);
  if (!need_h && !need_v) {  // a window of an unchanged image: a copy
    for (int y = 0; y < win.h; ++y)
      std::memcpy(dst->pixels.data() + y * row_bytes,
                  src.pixels.data() + (win.y + y) * src_stride + static_cast<size_t>(win.x) * c, row_bytes);
    return Status::Ok();
  }
  if (!need_v) {  // width only: output rows are source rows
    resample_rows(src, win.y, win.h, th, win.w, dst->pixels.data());
    return Status::Ok();
  }
  if (!need_h) {  // height only: output columns are source columns
    resample_cols(src.pixels.data() + static_cast<size_t>(win.x) * c, src_stride, row_bytes, 0, tv, win.h,
                  dst->pixels.data());
    return Status::Ok();
  }
  // Horizontal pass over just the rows the vertical pass reads, and just the window's columns.
  const int row0 = tv.first[0];
  const int row1 = tv.first[win.h - 1] + tv.count[win.h - 1];
  // tmp is (source rows the vertical pass reads) x window width: bounded like the decoders' working memory.
  const uint64_t tmp_bytes = static_cast<uint64_t>(row1 - row0) * row_bytes;
  if (tmp_bytes > kMaxImageDecodeBytes)
    return bad_input("resize: " + std::to_string(src.width) + "x" + std::to_string(src.height) + " to " +
                     std::to_string(out_w) + "x" + std::to_string(out_h) + " needs an intermediate of " +
                     std::to_string(tmp_bytes) + " bytes, above the limit of " +
                     std::to_string(kMaxImageDecodeBytes));
  std::vector<uint8_t> tmp(static_cast<size_t>(tmp_bytes));
  resample_rows(src, row0, row1 - row0, th, win.w, tmp.data());
  resample_cols(tmp.data(), row_bytes, row_bytes, row0, tv, win.h, dst->pixels.data());
  return Status::Ok();
}

Status check_resize(const Image& src, int out_w, int out_h, Interpolation interp, const Image* dst) {
  if (dst == nullptr) return invalid_argument("resize: null output image");
  VITRT_RETURN_IF_ERROR(image_internal::check_image(src, "resize"));
  if (out_w <= 0 || out_h <= 0)
    return invalid_argument("resize: output size " + std::to_string(out_w) + "x" + std::to_string(out_h) +
                            " must be positive");
  if (interp != Interpolation::kBilinear && interp != Interpolation::kBicubic &&
      interp != Interpolation::kNearest)
    return invalid_argument("resize: unknown interpolation " + std::to_string(static_cast<int>(interp)));
  return Status::Ok();
}

}  // namespace

Status resize_pil_window(const Image& src, int out_w, int out_h, Interpolation interp,
                         const PixelWindow& window, Image* dst) {
  VITRT_RETURN_IF_ERROR(check_resize(src, out_w, out_h, interp, dst));
  if (window.w <= 0 || window.h <= 0 || window.x < 0 || window.y < 0 || window.x > out_w - window.w ||
      window.y > out_h - window.h)
    return invalid_argument("resize: window " + std::to_string(window.w) + "x" + std::to_string(window.h) +
                            " at (" + std::to_string(window.x) + ", " + std::to_string(window.y) +
                            ") is not inside the " + std::to_string(out_w) + "x" + std::to_string(out_h) +
                            " output");
  Image result;
  try {
    VITRT_RETURN_IF_ERROR(resize_impl(src, out_w, out_h, interp, window, &result));
  } catch (const std::bad_alloc&) {  // the taps or the intermediate image
    return bad_input("resize: out of memory resizing " + std::to_string(src.width) + "x" +
                     std::to_string(src.height) + " to " + std::to_string(out_w) + "x" +
                     std::to_string(out_h));
  }
  *dst = std::move(result);  // src may alias dst
  return Status::Ok();
}

Status resize_pil(const Image& src, int out_w, int out_h, Interpolation interp, Image* dst) {
  VITRT_RETURN_IF_ERROR(check_resize(src, out_w, out_h, interp, dst));
  if (out_w == src.width && out_h == src.height) {  // PIL returns a copy
    if (dst != &src) *dst = src;
    return Status::Ok();
  }
  return resize_pil_window(src, out_w, out_h, interp, PixelWindow{0, 0, out_w, out_h}, dst);
}

}  // namespace vitrt
