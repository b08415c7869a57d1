// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// OpRunner (tests/ops/op_test_util.h) with a thread count: plans one node with KernelPlan::num_threads = T and
// runs it with KernelArgs::num_threads = T, outputs and workspace poisoned with NaN.
#include <limits>

#include "ops/op_cases.h"

namespace vitrt {
namespace test {

class ThreadedOpRunner {
 public:
  Status plan(Backend& backend, OpType type, const OpAttrs& attrs, const std::vector<const HostTensor*>& inputs,
              const std::vector<bool>& constant, int threads, const std::string& name = "test_op") {
    graph_ = Graph{};
    threads_ = threads;
    std::vector<int32_t> ins;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i]) {
        ins.push_back(kAbsent);
      } else if (i < constant.size() && constant[i]) {
        ins.push_back(graph_.add_constant("in" + std::to_string(i), inputs[i]->shape, inputs[i]->data));
      } else {
        ins.push_back(graph_.add_activation("in" + std::to_string(i), inputs[i]->shape));
        graph_.inputs.push_back(ins.back());
      }
    }
    const int32_t out = graph_.add_activation("out", Shape{});
    graph_.outputs.push_back(out);
    graph_.add_node(type, attrs, ins, {out}, name);
    const Node& node = graph_.nodes.back();
    KernelPlan plan;
    plan.node = &node;
    plan.graph = &graph_;
    plan.num_threads = threads;
    plan.num_src = static_cast<int>(ins.size());
    const Shape* shapes[kMaxOpInputs] = {};
    for (int i = 0; i < plan.num_src; ++i) {
      if (ins[i] == kAbsent) continue;
      plan.src_tensors[i] = &graph_.tensors[ins[i]];
      plan.src_shapes[i] = inputs[i]->shape;
      shapes[i] = &plan.src_shapes[i];
    }
    Shape dst[kMaxOpOutputs];
    VITRT_RETURN_IF_ERROR(infer_node_shapes(node, shapes, plan.num_src, dst));
    graph_.tensors[out].shape = dst[0];
    plan.num_dst = 1;
    plan.dst_shapes[0] = dst[0];
    out_shape_ = dst[0];
    info_ = KernelInfo{};
    kernel_.reset();
    VITRT_RETURN_IF_ERROR(backend.create_kernel(plan, &kernel_, &info_));
    if (!kernel_) return runtime_error("backend returned no kernel");
    workspace_.resize(info_.workspace_bytes / sizeof(float) + 1);
    return Status::Ok();
  }

  const Shape& planned_output_shape() const { return out_shape_; }
  const KernelInfo& info() const { return info_; }

  Status run(const std::vector<const HostTensor*>& inputs, HostTensor* out, const Shape* out_shape = nullptr,
             bool inplace = false) {
    if (!kernel_) return runtime_error("not planned");
    const int n = static_cast<int>(inputs.size());
    std::vector<AlignedBuffer> bufs(n);
    std::vector<TensorRef> refs(n);
    KernelArgs args;
    args.num_src = n;
    args.num_threads = threads_;
    const Shape* shapes[kMaxOpInputs] = {};
    for (int i = 0; i < n && i < kMaxOpInputs; ++i) {
      if (!inputs[i]) continue;
      bufs[i].resize(inputs[i]->data.size());
      if (!inputs[i]->data.empty())
        std::memcpy(bufs[i].data(), inputs[i]->data.data(), inputs[i]->data.size() * sizeof(float));
      refs[i].data = bufs[i].data();
      refs[i].shape = inputs[i]->shape;
      args.src[i] = &refs[i];
      shapes[i] = &refs[i].shape;
    }
    Shape dst_shape = out_shape_;
    if (out_shape) {
      dst_shape = *out_shape;
    } else {
      Shape inferred[kMaxOpOutputs];
      if (infer_node_shapes(graph_.nodes.back(), shapes, n, inferred).ok()) dst_shape = inferred[0];
    }
    AlignedBuffer out_buf;
    TensorRef dst;
    dst.shape = dst_shape;
    if (inplace) {
      dst.data = refs[0].data;
    } else {
      out_buf.resize(static_cast<size_t>(dst_shape.numel()));
      out_buf.fill(std::numeric_limits<float>::quiet_NaN());
      dst.data = out_buf.data();
    }
    args.dst[0] = &dst;
    args.num_dst = 1;
    workspace_.fill(std::numeric_limits<float>::quiet_NaN());
    args.workspace = info_.workspace_bytes ? workspace_.data() : nullptr;
    args.workspace_bytes = info_.workspace_bytes;
    Status s = kernel_->run(args);
    if (s.ok() && out) {
      out->shape = dst_shape;
      const float* p = static_cast<const float*>(dst.data);
      out->data.assign(p, p + dst_shape.numel());
    }
    return s;
  }

 private:
  Graph graph_;
  int threads_ = 1;
  std::unique_ptr<Kernel> kernel_;
  KernelInfo info_;
  Shape out_shape_;
  AlignedBuffer workspace_;
};

}  // namespace test
}  // namespace vitrt
