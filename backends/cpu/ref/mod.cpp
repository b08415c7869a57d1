// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fmod and Mod: the remainders of ONNX Mod (remainder.h), numpy broadcasting.
#include "backends/cpu/ref/binary.h"
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/remainder.h"

namespace vitrt {
namespace ref {
namespace {

struct FmodOp {
  float operator()(float a, float b) const { return fmod_rem(a, b); }
};

struct ModOp {
  float operator()(float a, float b) const { return python_mod(a, b); }
};

}  // namespace

Status create_fmod(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  return create_binary<FmodOp>(plan, kernel, info);
}

Status create_mod(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  return create_binary<ModOp>(plan, kernel, info);
}

}  // namespace ref
}  // namespace vitrt
