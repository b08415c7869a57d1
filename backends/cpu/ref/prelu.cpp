// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// PRelu: x < 0 ? x·slope : x, numpy broadcasting (ONNX PRelu; torch.nn.PReLU, whose slope is one value or one
// per channel). NaN stays NaN; so does x = 0 with an infinite or NaN slope, as ONNX's reference
// (numpy.where(x < 0, x·slope, x)) gives, where torch's x > 0 ? x : slope·x would not.
#include "backends/cpu/ref/binary.h"
#include "backends/cpu/ref/kernels.h"

namespace vitrt {
namespace ref {
namespace {

struct PReluOp {
  float operator()(float x, float slope) const { return x < 0.0f ? x * slope : x; }
};

}  // namespace

Status create_prelu(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  return create_binary<PReluOp>(plan, kernel, info);
}

}  // namespace ref
}  // namespace vitrt
