// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The plan-time checks every float32 backend makes before building a kernel: operand counts, dtypes, and
// planned shapes equal to what the op's own shape inference says.
#include <string>

#include "backends/backend.h"
#include "ops/op_registry.h"

namespace vitrt {

inline Status check_float32_plan(const KernelPlan& plan, const char* backend) {
  const Node& node = *plan.node;
  const std::string where = std::string(backend) + " backend: " + op_type_name(node.type) + " '" + node.name + "'";
  if (plan.num_src < 0 || plan.num_src > kMaxOpInputs || plan.num_dst < 1 || plan.num_dst > kMaxOpOutputs)
    return bad_model(where + ": bad operand counts");
  for (int i = 0; i < plan.num_src; ++i)
    if (plan.src_tensors[i] && plan.src_tensors[i]->dtype != DType::kFloat32)
      return unsupported(where + ": input " + std::to_string(i) + " is " + dtype_name(plan.src_tensors[i]->dtype) +
                         ", only float32 is implemented");
  const Shape* shapes[kMaxOpInputs] = {};
  for (int i = 0; i < plan.num_src; ++i)
    if (plan.src_tensors[i] || plan.src_shapes[i].rank > 0) shapes[i] = &plan.src_shapes[i];
  Shape want[kMaxOpOutputs];
  Status s = infer_node_shapes(node, shapes, plan.num_src, want);
  if (!s.ok()) return s.with_context(where);
  for (int o = 0; o < plan.num_dst; ++o)
    if (want[o] != plan.dst_shapes[o])
      return bad_model(where + ": planned output " + std::to_string(o) + " " + plan.dst_shapes[o].str() +
                       " disagrees with shape inference " + want[o].str());
  return Status::Ok();
}

}  // namespace vitrt
