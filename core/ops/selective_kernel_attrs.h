// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The rules of the SelectiveKernel op's attributes and the positions of its inputs (ir/op_attrs.h), shared by
// its shape inference, the file format's decoder, the kernels and the planner pass.
#include <string>

#include "ir/op_attrs.h"

namespace vitrt {

// Where each weight sits among the inputs: after the M branch outputs.
struct SelectiveKernelInputs {
  int32_t m;
  int fc_reduce_weight() const { return m; }
  int fc_reduce_bias() const { return m + 1; }
  int z_scale() const { return m + 2; }
  int z_shift() const { return m + 3; }
  int fc_select_weight() const { return m + 4; }
  int fc_select_bias() const { return m + 5; }
  int count() const { return m + 6; }  // every input; trailing absent ones may be left out
};

// Empty when `a` is well formed, else what is wrong: 1 <= branches <= kMaxSelectiveKernelBranches, a known
// z activation.
std::string selective_kernel_attrs_problem(const SelectiveKernelAttrs& a);

}  // namespace vitrt
