// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Pow: dst = a^b (std::pow in float32, as torch.pow and ONNX Pow), numpy broadcasting.
#include <cmath>

#include "backends/cpu/ref/binary.h"
#include "backends/cpu/ref/kernels.h"

namespace vitrt {
namespace ref {
namespace {

struct PowOp {
  float operator()(float a, float b) const { return std::pow(a, b); }
};

}  // namespace

Status create_pow(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  return create_binary<PowOp>(plan, kernel, info);
}

}  // namespace ref
}  // namespace vitrt
