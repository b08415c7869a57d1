// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Max: dst = the larger of a and b, numpy broadcasting. NaN in either gives NaN (torch.maximum, ONNX Max).
#include "backends/cpu/ref/binary.h"
#include "backends/cpu/ref/kernels.h"

namespace vitrt {
namespace ref {
namespace {

struct MaxOp {
  // a >= b is false when either is NaN; a != a picks a NaN a, and a NaN b falls through to b.
  float operator()(float a, float b) const { return a >= b || a != a ? a : b; }
};

}  // namespace

Status create_max(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  return create_binary<MaxOp>(plan, kernel, info);
}

}  // namespace ref
}  // namespace vitrt
