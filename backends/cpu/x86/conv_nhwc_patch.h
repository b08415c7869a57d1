// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What the channels-last GEMM convs share (gemm_conv2d_nhwc.cpp in fp32, gemm_conv2d_bf16.cpp in bf16): which
// convs they take, the weight reordered to [Cout][kh][kw][Cin], and the patch of one output pixel, the
// kh·kw·Cin input values under the kernel in (ky, kx, c) order, zero outside the image.
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {

// A dense channels-last Conv2d with a constant weight of the planned size and a non-empty output: src
// [B,H,W,Cin], groups 1, weight [Cout,Cin,kh,kw].
inline bool dense_channels_last_conv(const KernelPlan& plan, const Conv2dAttrs& a) {
  const Tensor* w = plan.src_tensors[1];
  const Shape &ws = plan.src_shapes[1], &xs = plan.src_shapes[0];
  return a.channels_last && a.groups == 1 && ref::activation_valid(a.activation) && xs.rank == 4 &&
         ws.rank == 4 && ws[1] == xs[3] && ws[0] >= 1 && w && w->is_constant && w->constant.data &&
         w->constant.size == static_cast<size_t>(ws.numel()) * sizeof(float) &&
         plan.dst_shapes[0].numel() != 0;
}

// w [Cout][Cin][kh][kw] → [Cout][kh][kw][Cin], the order of a patch row.
inline std::vector<float> reorder_weight_for_patches(const float* w, int64_t cout, int64_t cin, int64_t kh,
                                                     int64_t kw) {
  const int64_t k = kh * kw * cin;
  std::vector<float> dst(static_cast<size_t>(cout * k));
  for (int64_t co = 0; co < cout; ++co)
    for (int64_t c = 0; c < cin; ++c)
      for (int64_t t = 0; t < kh * kw; ++t)
        dst[static_cast<size_t>(co * k + t * cin + c)] = w[(co * cin + c) * kh * kw + t];
  return dst;
}

// The patch of output row r (= (b·Ho + oy)·Wo + ox) of a [B,H,W,Cin] input, into row (kh·kw·Cin floats).
inline void gather_patch_row(const Conv2dAttrs& a, int64_t cin, int64_t kh, int64_t kw, const float* src,
                             int64_t h, int64_t wd, int64_t ho, int64_t wo, int64_t r, float* row) {
  const size_t run = static_cast<size_t>(cin) * sizeof(float);
  const int64_t b = r / (ho * wo), oy = r / wo % ho, ox = r % wo;
  for (int64_t ky = 0; ky < kh; ++ky) {
    const int64_t iy = oy * a.stride_h - a.pad_h + ky * a.dilation_h;
    const int64_t ix0 = ox * a.stride_w - a.pad_w;
    if (a.dilation_w == 1 && iy >= 0 && iy < h && ix0 >= 0 && ix0 + kw <= wd) {
      // The kernel row lies inside the image: kw·Cin contiguous input values.
      std::memcpy(row + ky * kw * cin, src + ((b * h + iy) * wd + ix0) * cin, run * kw);
      continue;
    }
    for (int64_t kx = 0; kx < kw; ++kx) {
      const int64_t ix = ix0 + kx * a.dilation_w;
      float* seg = row + (ky * kw + kx) * cin;
      if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
        std::memset(seg, 0, run);
      else
        std::memcpy(seg, src + ((b * h + iy) * wd + ix) * cin, run);
    }
  }
}

}  // namespace x86
}  // namespace vitrt
