// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The operand checks every float32 backend makes, written once: the shapes of a plan's or a run's inputs as
// the op definitions (core/ops) take them, and the run-time validation a kernel does before it touches its
// operands (presence, data, dtype, and output shapes equal to the op's shape inference on the actual input
// shapes), so that a wrong shape is a Status, never a crash.
#include <string>

#include "backends/backend.h"
#include "ops/op_registry.h"

namespace vitrt {

// shapes[i] = the planned shape of input i, nullptr where the input is absent (no tensor and no shape).
inline void planned_src_shapes(const KernelPlan& plan, const Shape** shapes) {
  for (int i = 0; i < plan.num_src && i < kMaxOpInputs; ++i)
    shapes[i] = plan.src_tensors[i] || plan.src_shapes[i].rank > 0 ? &plan.src_shapes[i] : nullptr;
}

// shapes[i] = the run-time shape of input i, nullptr where the input is absent.
inline void run_src_shapes(const KernelArgs& args, const Shape** shapes) {
  for (int i = 0; i < args.num_src && i < kMaxOpInputs; ++i)
    shapes[i] = args.src[i] ? &args.src[i]->shape : nullptr;
}

// Validates a run's operands for `node`: input and output counts in range, every present input with data (or
// no elements) and float32, every output present with data and float32, and the output shapes exactly what
// the op's shape inference gives for the input shapes. The message names the operand, without the op (the
// caller prefixes its label). Allocates only on failure.
inline Status check_float32_run(const Node& node, const KernelArgs& args) {
  if (args.num_src < 0 || args.num_src > kMaxOpInputs) return runtime_error("bad number of inputs");
  if (args.num_dst < 1 || args.num_dst > kMaxOpOutputs || !args.dst[0] || !args.dst[0]->data)
    return runtime_error("missing output");
  for (int i = 0; i < args.num_src; ++i) {
    const TensorRef* t = args.src[i];
    if (!t) continue;
    if (!t->data && t->numel() != 0) return runtime_error("input " + std::to_string(i) + " has no data");
    if (t->dtype != DType::kFloat32) return runtime_error("input " + std::to_string(i) + " is not float32");
  }
  for (int o = 0; o < args.num_dst; ++o) {
    if (!args.dst[o] || !args.dst[o]->data) return runtime_error("missing output " + std::to_string(o));
    if (args.dst[o]->dtype != DType::kFloat32)
      return runtime_error("output " + std::to_string(o) + " is not float32");
  }
  const Shape* shapes[kMaxOpInputs] = {};
  run_src_shapes(args, shapes);
  Shape want[kMaxOpOutputs];
  Status s = infer_node_shapes(node, shapes, args.num_src, want);
  if (!s.ok()) return runtime_error("run-time shapes rejected: " + s.message());
  for (int o = 0; o < args.num_dst; ++o)
    if (want[o] != args.dst[o]->shape)
      return runtime_error("output " + std::to_string(o) + " shape " + args.dst[o]->shape.str() +
                           " does not match the inputs (expected " + want[o].str() + ")");
  return Status::Ok();
}

}  // namespace vitrt
