// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Div: dst = a / b, numpy broadcasting.
#include "backends/cpu/ref/binary.h"
#include "backends/cpu/ref/kernels.h"

namespace vitrt {
namespace ref {
namespace {

struct DivOp {
  float operator()(float a, float b) const { return a / b; }
};

}  // namespace

Status create_div(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  return create_binary<DivOp>(plan, kernel, info);
}

}  // namespace ref
}  // namespace vitrt
