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

// Fixed-point taps for one axis: output i reads count[i] inputs from first[i] with weights w[i * ksize + k].
struct AxisTaps {
  int ksize = 0;
  std::vector<int> first, count;
  std::vector<int32_t> w;
};

void compute_taps(int in_size, int out_size, const Filter& f, AxisTaps* t) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = f.support * filterscale;
  const int ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  t->ksize = ksize;
  t->first.assign(out_size, 0);
  t->count.assign(out_size, 0);
  t->w.assign(static_cast<size_t>(out_size) * ksize, 0);
  std::vector<double> k(ksize);
  for (int i = 0; i < out_size; ++i) {
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
    int32_t* out = &t->w[static_cast<size_t>(i) * ksize];
    for (int j = 0; j < n; ++j) {
      const double v = sum != 0.0 ? k[j] / sum : k[j];
      out[j] = v < 0 ? static_cast<int32_t>(-0.5 + v * (1 << kPrecisionBits))
                     : static_cast<int32_t>(0.5 + v * (1 << kPrecisionBits));
    }
    t->first[i] = lo;
    t->count[i] = n;
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

// Vertical pass: src rows are offset by row0 relative to the taps' coordinates.
void resample_cols(const uint8_t* src, int width, int c, int row0, const AxisTaps& t, int out_h,
                   uint8_t* dst) {
  const int64_t half = int64_t{1} << (kPrecisionBits - 1);
  const size_t stride = static_cast<size_t>(width) * c;
  std::vector<int64_t> acc(stride);
  for (int y = 0; y < out_h; ++y) {
    const int32_t* k = &t.w[static_cast<size_t>(y) * t.ksize];
    std::fill(acc.begin(), acc.end(), half);
    for (int j = 0; j < t.count[y]; ++j) {
      const uint8_t* in = src + static_cast<size_t>(t.first[y] - row0 + j) * stride;
      const int64_t kj = k[j];
      for (size_t i = 0; i < stride; ++i) acc[i] += in[i] * kj;
    }
    uint8_t* out = dst + static_cast<size_t>(y) * stride;
    for (size_t i = 0; i < stride; ++i) out[i] = clip8(acc[i]);
  }
}

void resize_nearest(const Image& src, Image* dst) {
  const int c = src.channels;
  const double sx = static_cast<double>(src.width) / dst->width;
  const double sy = static_cast<double>(src.height) / dst->height;
  // PIL: COORD(v) = v < 0 ? -1 : (int)v; positions outside the source are filled with 0.
  std::vector<int> xin(dst->width, -1);
  double xo = sx * 0.5;
  for (int x = 0; x < dst->width; ++x, xo += sx) {
    const int xi = xo < 0.0 ? -1 : static_cast<int>(xo);
    if (xi >= 0 && xi < src.width) xin[x] = xi;
  }
  double yo = sy * 0.5;
  for (int y = 0; y < dst->height; ++y, yo += sy) {
    const int yi = yo < 0.0 ? -1 : static_cast<int>(yo);
    uint8_t* out = dst->pixels.data() + static_cast<size_t>(y) * dst->width * c;
    if (yi < 0 || yi >= src.height) {
      std::memset(out, 0, static_cast<size_t>(dst->width) * c);
      continue;
    }
    const uint8_t* in = src.pixels.data() + static_cast<size_t>(yi) * src.width * c;
    for (int x = 0; x < dst->width; ++x) {
      for (int ch = 0; ch < c; ++ch) out[x * c + ch] = xin[x] < 0 ? 0 : in[xin[x] * c + ch];
    }
  }
}

Status resize_impl(const Image& src, int out_w, int out_h, Interpolation interp, Image* dst) {
  VITRT_RETURN_IF_ERROR(image_internal::allocate_image(out_w, out_h, src.channels, dst, "resize"));
  if (interp == Interpolation::kNearest) {
    resize_nearest(src, dst);
    return Status::Ok();
  }
  const Filter filter =
      interp == Interpolation::kBilinear ? Filter{bilinear_weight, 1.0} : Filter{bicubic_weight, 2.0};
  const bool need_h = out_w != src.width;
  const bool need_v = out_h != src.height;
  AxisTaps th, tv;
  if (need_h) compute_taps(src.width, out_w, filter, &th);
  if (need_v) compute_taps(src.height, out_h, filter, &tv);
  const int c = src.channels;
  if (!need_v) {  // width only
    resample_rows(src, 0, src.height, th, out_w, dst->pixels.data());
    return Status::Ok();
  }
  if (!need_h) {  // height only
    resample_cols(src.pixels.data(), src.width, c, 0, tv, out_h, dst->pixels.data());
    return Status::Ok();
  }
  // Horizontal pass over just the rows the vertical pass reads.
  const int row0 = tv.first[0];
  const int row1 = tv.first[out_h - 1] + tv.count[out_h - 1];
  // tmp is (source rows the vertical pass reads) x out_w: bounded like the decoders' working memory.
  const uint64_t tmp_bytes = static_cast<uint64_t>(row1 - row0) * static_cast<uint64_t>(out_w) * c;
  if (tmp_bytes > kMaxImageDecodeBytes)
    return bad_input("resize: " + std::to_string(src.width) + "x" + std::to_string(src.height) + " to " +
                     std::to_string(out_w) + "x" + std::to_string(out_h) + " needs an intermediate of " +
                     std::to_string(tmp_bytes) + " bytes, above the limit of " +
                     std::to_string(kMaxImageDecodeBytes));
  std::vector<uint8_t> tmp(static_cast<size_t>(tmp_bytes));
  resample_rows(src, row0, row1 - row0, th, out_w, tmp.data());
  resample_cols(tmp.data(), out_w, c, row0, tv, out_h, dst->pixels.data());
  return Status::Ok();
}

}  // namespace

Status resize_pil(const Image& src, int out_w, int out_h, Interpolation interp, Image* dst) {
  if (dst == nullptr) return invalid_argument("resize: null output image");
  VITRT_RETURN_IF_ERROR(image_internal::check_image(src, "resize"));
  if (out_w <= 0 || out_h <= 0)
    return invalid_argument("resize: output size " + std::to_string(out_w) + "x" + std::to_string(out_h) +
                            " must be positive");
  if (interp != Interpolation::kBilinear && interp != Interpolation::kBicubic &&
      interp != Interpolation::kNearest)
    return invalid_argument("resize: unknown interpolation " + std::to_string(static_cast<int>(interp)));
  if (out_w == src.width && out_h == src.height) {  // PIL returns a copy
    if (dst != &src) *dst = src;
    return Status::Ok();
  }
  Image result;
  try {
    VITRT_RETURN_IF_ERROR(resize_impl(src, out_w, out_h, interp, &result));
  } catch (const std::bad_alloc&) {  // the taps or the intermediate image
    return bad_input("resize: out of memory resizing " + std::to_string(src.width) + "x" +
                     std::to_string(src.height) + " to " + std::to_string(out_w) + "x" +
                     std::to_string(out_h));
  }
  *dst = std::move(result);  // src may alias dst
  return Status::Ok();
}

}  // namespace vitrt
