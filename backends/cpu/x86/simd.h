// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The ISA-specific inner loops, one table per ISA level. simd_impl.h writes each loop once on xsimd batches;
// simd_avx512.cpp and simd_avx2.cpp instantiate it with their own -m flags, and the backend picks a table by
// CPUID at creation. Nothing here allocates or threads: callers split the work.
#include <cstdint>

namespace vitrt {
namespace x86 {

// kPRelu: a < 0 ? a·b : a, b the slope (not commutative).
enum class BinaryOp : int { kAdd = 0, kMul = 1, kPRelu = 2 };

// The Unary kinds (core/ir/op_attrs.h, UnaryKind) with a vector loop. All but Sigmoid and Silu repeat the
// reference's float arithmetic exactly (backends/cpu/ref/unary_functions.h), so the results are
// bit-identical; Sigmoid and Silu use the vector GELU's exp (gelu_vec_impl.h) and stay within 1e-6 relative
// of the reference (tests/x86/unary_x86_test.cpp). Clip's bounds are (alpha, beta), LeakyRelu's slope alpha.
enum class VecUnary : int {
  kAbs,
  kNeg,
  kFloor,
  kCeil,
  kRound,  // halves to even
  kSqrt,
  kReciprocal,
  kClip,
  kLeakyRelu,
  kHardSwish,
  kSigmoid,  // 1 / (1 + e^-x)
  kSilu,     // x / (1 + e^-x)
};

// One output row of one [H, W] plane of Pool2d (core/ir/op_attrs.h, Pool2dAttrs): dst[0, wo) for output row
// oy. Sizes as the reference kernel takes them (shape inference has checked them).
struct Pool2dRow {
  const float* src = nullptr;  // the plane [h, w]
  int64_t h = 0, w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool is_max = true;
  bool count_include_pad = false;
  int64_t oy = 0, wo = 0;
  float* dst = nullptr;  // the output row [wo]
};

struct SimdTable {
  const char* name;
  int width;  // floats per vector
  // y[i] = a[i*sa] op b[i*sb], sa and sb in {0, 1}.
  void (*binary)(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n);
  void (*gelu)(const float* x, float* y, int64_t n, bool tanh_form);
  void (*relu)(const float* x, float* y, int64_t n);
  void (*unary)(VecUnary op, float alpha, float beta, const float* x, float* y, int64_t n);
  // rows of c: (x - mean)/sqrt(var + eps)·γ + β (γ, β may be null).
  void (*layer_norm)(const float* x, float* y, int64_t rows, int64_t c, const float* gamma, const float* beta,
                     float eps);
  // Softmax (exp(x - max) / Σ) of `rows` contiguous rows of n elements.
  void (*softmax_rows)(const float* x, float* y, int64_t rows, int64_t n);
  // Softmax along an axis of n whose elements lie `inner` apart, for columns [c0, c1) of one slice
  // x[n][inner].
  void (*softmax_columns)(const float* x, float* y, int64_t n, int64_t inner, int64_t c0, int64_t c1);
  void (*pool2d_row)(const Pool2dRow& r);
  // Σ x[0..n): float vectors over blocks of 1024 elements, each block's total added in double (the rounding
  // error stays that of a short float sum however long x is).
  double (*sum)(const float* x, int64_t n);
  // Σ a[i]·b[i] over [0, n), in float vectors.
  float (*dot)(const float* a, const float* b, int64_t n);
};

const SimdTable* simd_table_avx512();
const SimdTable* simd_table_avx2();

}  // namespace x86
}  // namespace vitrt
