// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Sub: dst = a - b, numpy broadcasting.
#include "backends/cpu/ref/binary.h"
#include "backends/cpu/ref/kernels.h"

namespace vitrt {
namespace ref {
namespace {

struct SubOp {
  float operator()(float a, float b) const { return a - b; }
};

}  // namespace

Status create_sub(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  return create_binary<SubOp>(plan, kernel, info);
}

}  // namespace ref
}  // namespace vitrt
