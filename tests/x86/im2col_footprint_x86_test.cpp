// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// im2col_footprint (backends/cpu/x86/im2col.h): the input boxes a Conv2d panel's GEMM prefetches for the next
// panel. Every box must lie inside the input tensor and cover the input rows the panel's receptive
// fields touch (within their span); output rows wholly in the padding touch none and get no box.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/cpu/x86/im2col.h"

namespace vitrt {
namespace {

struct Case {
  int64_t b, cin, h, w, k, stride, pad, dil;
};

TEST_CASE("x86 im2col_footprint: boxes inside the input, covering the rows the panel reads") {
  // 1×1 and 3×3 kernels whose padding exceeds their reach (rows wholly in the padding), strided, dilated,
  // a pointwise conv, and panels that span two images.
  const Case cases[] = {{1, 2, 2, 2, 1, 1, 3, 1}, {2, 3, 5, 7, 3, 1, 4, 1}, {1, 1, 9, 4, 3, 2, 1, 2},
                        {3, 4, 6, 6, 1, 1, 0, 1}, {2, 2, 7, 7, 3, 2, 1, 1}, {1, 3, 4, 5, 2, 1, 3, 2}};
  int checked = 0;
  for (const Case& c : cases) {
    CAPTURE(c.h);
    CAPTURE(c.k);
    CAPTURE(c.pad);
    const int64_t reach = (c.k - 1) * c.dil + 1;
    const int64_t ho = (c.h + 2 * c.pad - reach) / c.stride + 1,
                  wo = (c.w + 2 * c.pad - reach) / c.stride + 1;
    const int64_t plane = c.h * c.w, image = c.cin * plane, total = c.b * image;
    std::vector<float> x(static_cast<size_t>(total));
    x86::Im2colPanel p;
    p.x = x.data();
    p.image_stride = image;
    p.cin = c.cin;
    p.h = c.h;
    p.w = c.w;
    p.kh = p.kw = c.k;
    p.stride_h = p.stride_w = c.stride;
    p.pad_h = p.pad_w = c.pad;
    p.dil_h = p.dil_w = c.dil;
    p.wo = wo;
    p.pix = ho * wo;
    p.nr = 4;
    for (int64_t first = 0; first < c.b * p.pix; first += p.nr) {
      p.first = first;
      p.cols = std::min<int64_t>(p.nr, c.b * p.pix - first);
      // The input rows each image's part of the panel reads, from the receptive fields themselves.
      std::vector<std::vector<bool>> want(static_cast<size_t>(c.b),
                                          std::vector<bool>(static_cast<size_t>(c.h)));
      std::vector<int64_t> span_lo(static_cast<size_t>(c.b), c.h), span_hi(static_cast<size_t>(c.b), 0);
      for (int64_t j = 0; j < p.cols; ++j) {
        const int64_t b = (first + j) / p.pix, oy = (first + j) % p.pix / wo;
        span_lo[b] = std::min(span_lo[b], std::max<int64_t>(0, oy * c.stride - c.pad));
        span_hi[b] = std::max(span_hi[b], std::min(c.h, oy * c.stride - c.pad + reach));
        for (int64_t ky = 0; ky < c.k; ++ky) {
          const int64_t iy = oy * c.stride - c.pad + ky * c.dil;
          if (iy >= 0 && iy < c.h) want[b][iy] = true;
        }
      }
      x86::GemmPrefetch boxes[4];
      const int n = x86::im2col_footprint(p, boxes, 4);
      std::vector<std::vector<bool>> got(static_cast<size_t>(c.b),
                                         std::vector<bool>(static_cast<size_t>(c.h)));
      for (int i = 0; i < n; ++i) {
        const int64_t off = boxes[i].base - x.data();
        CHECK(boxes[i].floats > 0);
        CHECK(off >= 0);
        CHECK(off + (boxes[i].rows - 1) * boxes[i].stride + boxes[i].floats <= total);
        const int64_t b = off / image;
        if (b >= c.b) continue;  // already failed above
        // A box covers the rows from its first float's to its last's (whole rows, or a pointwise run of
        // pixels).
        const int64_t f0 = off % image, f1 = f0 + boxes[i].floats - 1;
        for (int64_t r = f0 / c.w; r <= std::min<int64_t>(f1 / c.w, c.h - 1); ++r) got[b][r] = true;
      }
      for (int64_t b = 0; b < c.b; ++b)
        for (int64_t r = 0; r < c.h; ++r) {
          if (want[b][r] && !got[b][r]) FAIL_CHECK("row ", r, " of image ", b, " read but not prefetched");
          // Other rows only within the span of the receptive fields' rows (a box is one contiguous span).
          if (got[b][r] && !want[b][r] && !(r >= span_lo[b] && r < span_hi[b]))
            FAIL_CHECK("row ", r, " of image ", b, " prefetched but outside the receptive fields' span");
        }
      ++checked;
    }
  }
  MESSAGE("checked ", checked, " panels");
}

}  // namespace
}  // namespace vitrt
