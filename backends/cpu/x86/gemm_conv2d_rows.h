// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Conv2d's pixel-row form (gemm_conv2d_rows.cpp): the output pixels as the packed GEMM's rows and the output
// channels as its columns, taken by create_conv2d_gemm where the pixels would leave its NCHW panels part
// empty.
#include <memory>

#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {

// Whether a dense NCHW Conv2d with a constant weight needs clearly fewer multiply-adds (padding included)
// with its pixels as rows than in gemm_conv2d.cpp's form, and fits this form's limits (output rows, im2col
// size).
bool conv2d_rows_preferred(const Context& ctx, const KernelPlan& plan, const Conv2dAttrs& a);
Status create_conv2d_rows(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                          std::unique_ptr<Kernel>* kernel, KernelInfo* info);

}  // namespace x86
}  // namespace vitrt
