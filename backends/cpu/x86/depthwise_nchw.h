// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The image-layout (NCHW) depthwise Conv2d's plane kernel (conv2d.cpp drives it): output rows [oy0, oy1) of
// one channel's plane from that channel's input plane, any kernel size, stride, padding and dilation, with
// bias and activation applied in registers. Compiled per ISA in depthwise_nchw_avx512.cpp /
// depthwise_nchw_avx2.cpp; the layout of the scratch it fills is depthwise_nchw_impl.h's.
#include <cstdint>

#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "common/checked_math.h"

namespace vitrt {
namespace x86 {

// The zero-padded copy of the input rows one task reads: every padded row split into stride_w phases
// (phase p holds padded columns p, p + stride_w, ...), each `phase_floats` long, so that a tap of a strided
// conv reads contiguous floats. Wide enough for whole vectors past the last output column.
struct DepthwisePlaneLayout {
  int64_t phase_floats = 0;    // multiple of 16
  int64_t rows_per_task = 0;   // output rows per task (the plan's split)
  int64_t scratch_floats = 0;  // per task, multiple of 16
};

// The layout for tasks of `rows_per_task` output rows (>= 1), or false when a size overflows (the caller then
// declines the shape). A phase spans the output columns rounded up to whole 16-float vectors plus the last
// tap's offset in it; a task reads (rows_per_task - 1)·stride_h + (kh - 1)·dilation_h + 1 padded rows.
inline bool depthwise_plane_layout(int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w,
                                   int64_t dilation_h, int64_t dilation_w, int64_t wo, int64_t rows_per_task,
                                   DepthwisePlaneLayout* layout) {
  int64_t last_tap_h = 0, last_tap_w = 0, rows = 0, row_floats = 0, scratch = 0;
  if (kh < 1 || kw < 1 || stride_h < 1 || stride_w < 1 || dilation_h < 1 || dilation_w < 1 || wo < 1 ||
      rows_per_task < 1 || wo > (int64_t{1} << 40) || !checked_mul(kh - 1, dilation_h, &last_tap_h) ||
      !checked_mul(kw - 1, dilation_w, &last_tap_w) || !checked_mul(rows_per_task - 1, stride_h, &rows) ||
      last_tap_h > (int64_t{1} << 40) || last_tap_w > (int64_t{1} << 40) || rows > (int64_t{1} << 40))
    return false;
  rows += last_tap_h + 1;
  const int64_t phase = round16((wo + 15) / 16 * 16 + last_tap_w / stride_w);
  if (!checked_mul(phase, stride_w, &row_floats) || !checked_mul(row_floats, rows, &scratch)) return false;
  layout->phase_floats = phase;
  layout->rows_per_task = rows_per_task;
  layout->scratch_floats = scratch;
  return true;
}

struct DepthwisePlane {
  const float* src = nullptr;  // [H, W]
  int64_t h = 0, w = 0;
  const float* wt = nullptr;  // [kh, kw]
  int64_t kh = 0, kw = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  float bias = 0.0f;
  GemmAct act = GemmAct::kNone;
  int64_t wo = 0;
  int64_t oy0 = 0, oy1 = 0;  // the output rows to compute
  float* dst = nullptr;      // [Ho, Wo]
  int64_t phase_floats = 0;  // DepthwisePlaneLayout's
  float* scratch = nullptr;  // DepthwisePlaneLayout::scratch_floats, 64-byte aligned
};

void depthwise_nchw_rows_avx512(const DepthwisePlane& p);
void depthwise_nchw_rows_avx2(const DepthwisePlane& p);

}  // namespace x86
}  // namespace vitrt
