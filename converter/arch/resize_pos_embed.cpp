// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "arch/resize_pos_embed.h"

#include <cmath>

namespace vitrt::convert {
namespace {

struct Tap {
  int64_t i0, i1;
  double l0, l1;
};

// PyTorch's upsample_bilinear2d source index for align_corners=False (area_pixel_compute_source_index).
Tap tap(int64_t dst, int64_t in, int64_t out) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  double src = (static_cast<double>(dst) + 0.5) * scale - 0.5;
  if (src < 0) src = 0;
  Tap t;
  t.i0 = static_cast<int64_t>(src);
  if (t.i0 > in - 1) t.i0 = in - 1;
  t.i1 = t.i0 + (t.i0 < in - 1 ? 1 : 0);
  t.l1 = src - static_cast<double>(t.i0);
  t.l0 = 1.0 - t.l1;
  return t;
}

}  // namespace

std::vector<float> resize_bilinear(const std::vector<float>& src, int64_t channels, int64_t in_h,
                                   int64_t in_w, int64_t out_h, int64_t out_w) {
  if (in_h == out_h && in_w == out_w) return src;
  std::vector<float> dst(static_cast<size_t>(channels * out_h * out_w));
  for (int64_t c = 0; c < channels; ++c) {
    const float* s = src.data() + c * in_h * in_w;
    float* d = dst.data() + c * out_h * out_w;
    for (int64_t y = 0; y < out_h; ++y) {
      const Tap ty = tap(y, in_h, out_h);
      for (int64_t x = 0; x < out_w; ++x) {
        const Tap tx = tap(x, in_w, out_w);
        const double v = ty.l0 * (tx.l0 * s[ty.i0 * in_w + tx.i0] + tx.l1 * s[ty.i0 * in_w + tx.i1]) +
                         ty.l1 * (tx.l0 * s[ty.i1 * in_w + tx.i0] + tx.l1 * s[ty.i1 * in_w + tx.i1]);
        d[y * out_w + x] = static_cast<float>(v);
      }
    }
  }
  return dst;
}

std::vector<float> resize_pos_embed(const std::vector<float>& tokens, int64_t c, int64_t in_h, int64_t in_w,
                                    int64_t out_h, int64_t out_w) {
  if (in_h == out_h && in_w == out_w) return tokens;
  std::vector<float> image(static_cast<size_t>(c * in_h * in_w));
  for (int64_t n = 0; n < in_h * in_w; ++n)
    for (int64_t ch = 0; ch < c; ++ch) image[ch * in_h * in_w + n] = tokens[n * c + ch];
  const std::vector<float> resized = resize_bilinear(image, c, in_h, in_w, out_h, out_w);
  std::vector<float> out(static_cast<size_t>(out_h * out_w * c));
  for (int64_t n = 0; n < out_h * out_w; ++n)
    for (int64_t ch = 0; ch < c; ++ch) out[n * c + ch] = resized[ch * out_h * out_w + n];
  return out;
}

}  // namespace vitrt::convert
