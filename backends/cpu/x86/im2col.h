// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Conv2d's im2col, one GEMM panel at a time: the columns of `cols` consecutive output pixels of one group
// (consecutive across the images of a batch: pixel q of image b is column b·pix + q), written straight into
// the packed-panel layout of packed_gemm.h (row kk = (c, ky, kx) of the K rows holds nr floats, zero past
// `cols` and wherever the receptive field falls in the padding). The output pixels are cut into runs along
// output rows; each run of each row kk is a vector copy (stride 1) or a vector gather (stride > 1), with the
// padding columns of the run zeroed, never a per-element bounds check. Built per ISA (im2col_avx512.cpp,
// im2col_avx2.cpp); nothing allocates.
#include <algorithm>
#include <cstdint>

#include "backends/cpu/x86/packed_gemm.h"
#include "ir/op_attrs.h"

namespace vitrt {
namespace x86 {

struct Im2colPanel {
  const float* x = nullptr;  // image 0's first input channel of the group: [cin, h, w]
  int64_t image_stride = 0;  // floats from one image to the next
  int64_t cin = 0, h = 0, w = 0;
  int64_t kh = 0, kw = 0, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  int64_t wo = 0, pix = 0;  // output width and pixels per image
  int64_t first = 0;        // first column of the panel (b·pix + oy·wo + ox)
  int64_t cols = 0;         // pixels in the panel, <= nr
  int64_t nr = 0;           // floats per packed row
  float* dst = nullptr;     // cin·kh·kw rows of nr floats
};

// A panel's convolution geometry from the op's attributes: an h × w input, a kh × kw kernel, output width
// wo and pix pixels per image. The caller sets the input, channels, columns and destination.
inline Im2colPanel im2col_geometry(const Conv2dAttrs& a, int64_t h, int64_t w, int64_t kh, int64_t kw,
                                   int64_t wo, int64_t pix) {
  Im2colPanel p;
  p.h = h;
  p.w = w;
  p.kh = kh;
  p.kw = kw;
  p.stride_h = a.stride_h;
  p.stride_w = a.stride_w;
  p.pad_h = a.pad_h;
  p.pad_w = a.pad_w;
  p.dil_h = a.dilation_h;
  p.dil_w = a.dilation_w;
  p.wo = wo;
  p.pix = pix;
  return p;
}

// The input a panel reads, as GemmPrefetch boxes (one per image it touches, each the same rows or pixels of
// every input channel; at most max_boxes, the rest left out): what the GEMM of the panel before prefetches.
inline int im2col_footprint(const Im2colPanel& p, GemmPrefetch* boxes, int max_boxes) {
  const int64_t plane = p.h * p.w;
  const bool pointwise = p.kh == 1 && p.kw == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 &&
                         p.pad_w == 0 && p.w == p.wo;
  int n = 0;
  for (int64_t j = 0; j < p.cols && n < max_boxes;) {
    const int64_t b = (p.first + j) / p.pix, q = (p.first + j) % p.pix, len = std::min(p.cols - j, p.pix - q);
    int64_t first_float = q, floats = len;
    if (!pointwise) {  // whole input rows, from the first output row's window to the last's
      const int64_t oy0 = q / p.wo, oy1 = (q + len - 1) / p.wo;
      const int64_t top = std::min<int64_t>(p.h, std::max<int64_t>(0, oy0 * p.stride_h - p.pad_h));
      const int64_t bottom = std::min<int64_t>(p.h, oy1 * p.stride_h - p.pad_h + (p.kh - 1) * p.dil_h + 1);
      first_float = top * p.w;
      floats = std::max<int64_t>(0, bottom - top) * p.w;
    }
    j += len;
    // Output rows wholly in the bottom padding read no input: no box (its base would point past the tensor).
    if (floats == 0) continue;
    GemmPrefetch& box = boxes[n++];
    box.rows = p.cin;
    box.stride = plane;
    box.base = p.x + b * p.image_stride + first_float;
    box.floats = floats;
  }
  return n;
}

void im2col_panel_avx512(const Im2colPanel& p);
void im2col_panel_avx2(const Im2colPanel& p);

}  // namespace x86
}  // namespace vitrt
