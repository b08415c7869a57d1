// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The channels-last depthwise Conv2d's row kernel (depthwise_conv_nhwc.cpp drives it): one output row
// [Wo, C] of one image from the input image [H, W, C] and the weight repacked to [kh][kw][C], with bias and
// activation applied in registers. Compiled per ISA in depthwise_nhwc_avx512.cpp / depthwise_nhwc_avx2.cpp.
#include <cstdint>

#include "backends/cpu/x86/packed_gemm.h"

namespace vitrt {
namespace x86 {

struct DepthwiseRow {
  const float* src = nullptr;  // image b: [H, W, C]
  // Instead of src, where set: row iy of the image at src_rows[iy] ([W, C] each), so that a caller keeping
  // rows in a ring (ConvMlp's fc1 band) need not move them into one block.
  const float* const* src_rows = nullptr;
  int64_t h = 0, w = 0, c = 0;
  const float* wt = nullptr;  // [kh][kw][C]
  int64_t kh = 0, kw = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  const float* bias = nullptr;  // [C] or null
  GemmAct act = GemmAct::kNone;
  int64_t oy = 0, wo = 0;
  float* dst = nullptr;  // output row: [Wo, C]
  // depthwise_nhwc_row_bf16_avx512bf16's output row instead of dst: pixel ox's C values rounded to bf16 at
  // dst_bf16 + ox·ld_bf16 (ld_bf16 >= C rounded up to even), a zero after them when C is odd; that is the
  // bf16 GEMM's rows of pairs (gemm_bf16_pack_rows, packed_gemm_bf16.h) with ld_bf16 / 2 pairs a row.
  uint16_t* dst_bf16 = nullptr;
  int64_t ld_bf16 = 0;
};

// Each row's erf GELU is its ISA's table one (gelu_table_avx512.h, gelu_table_avx2.h: within 9e-8·|x| of the
// exact GELU, closer than the float formula, in about half and two thirds of the instructions of
// gelu_vec::gelu_erf; GELU(-0) is +0).
void depthwise_nhwc_row_avx512(const DepthwiseRow& r);
void depthwise_nhwc_row_avx2(const DepthwiseRow& r);
// The AVX-512 row into dst_bf16, each output rounded as gemm_bf16_pack_rows rounds it (to nearest even by
// vcvtneps2bf16, the same bits: bf16_round), so that a bf16 GEMM reading the conv's output (ConvMlp's fc2)
// needs no separate fp32 row and rounding pass. Its erf GELU is the table one (gelu_table_avx512.h). Needs
// AVX512-BF16.
void depthwise_nhwc_row_bf16_avx512bf16(const DepthwiseRow& r);

}  // namespace x86
}  // namespace vitrt
