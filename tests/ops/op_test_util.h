// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Running one op on any backend, for the backend parity tests (reference now; AVX-512 and CUDA reuse it).
//
// OpRunner builds a one-node graph (weight inputs as constants), infers shapes with the op registry, plans
// the kernel on the backend, and runs it with 64-byte-aligned buffers: inputs copied in, output and workspace
// poisoned with NaN first so that an unwritten element shows. compare_to_reference() checks an output against
// a float64 reference with a tolerance derived from PyTorch's own float32 error.
//
// Ops with several outputs (SoftmaxAttention's optional scores, ReusedAttention's new scores): the node gets
// `num_outputs` outputs, all allocated and poisoned on every run, and the runner reports the one at `index`
// (planned_output_shape, run's `out` and `out_shape`). The selection is set with select_outputs(), or comes
// from output_selections() by case name (load_op_cases registers every multi-output case there, so tests that
// only call plan/run check each output of such an op without knowing about it).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace test {

struct HostTensor {
  Shape shape;
  std::vector<float> data;
};

// A zero-length-safe float buffer aligned to 64 bytes.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t floats) { resize(floats); }
  void resize(size_t floats) {
    const size_t bytes = ((floats * sizeof(float) + 63) / 64 + 1) * 64;
    mem_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    size_ = floats;
  }
  float* data() { return mem_.get(); }
  size_t size() const { return size_; }
  void fill(float v) {
    for (size_t i = 0; i < size_; ++i) mem_.get()[i] = v;
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> mem_;
  size_t size_ = 0;
};

struct OutputSelection {
  int num_outputs = 1;  // outputs of the node
  int index = 0;        // the output the runner reports
};

// Output selections by case name, consulted by OpRunner::plan (see above).
inline std::map<std::string, OutputSelection>& output_selections() {
  static std::map<std::string, OutputSelection> selections;
  return selections;
}

class OpRunner {
 public:
  // The outputs of the next plan() when its name is not in output_selections().
  void select_outputs(int num_outputs, int index) {
    default_selection_ = OutputSelection{num_outputs, index};
  }
  const OutputSelection& selection() const { return sel_; }
  // Threads passed to the kernel at plan (KernelPlan::num_threads) and run (KernelArgs::num_threads) time.
  void set_threads(int threads) { threads_ = threads; }

  // Plans `type` with `attrs` on `backend` for `inputs` (shapes at the maximum batch; nullptr = an absent
  // optional input). constant[i] makes input i a graph constant (a weight): its data is given at plan time.
  Status plan(Backend& backend, OpType type, const OpAttrs& attrs,
              const std::vector<const HostTensor*>& inputs, const std::vector<bool>& constant,
              const std::string& name = "test_op") {
    graph_ = Graph{};
    sel_ = default_selection_;
    auto found = output_selections().find(name);
    if (found != output_selections().end()) sel_ = found->second;
    if (sel_.num_outputs < 1 || sel_.num_outputs > kMaxOpOutputs || sel_.index < 0 ||
        sel_.index >= sel_.num_outputs)
      return invalid_argument("bad output selection for " + name);
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
    std::vector<int32_t> outs;
    for (int o = 0; o < sel_.num_outputs; ++o) {
      outs.push_back(graph_.add_activation(o == 0 ? "out" : "out" + std::to_string(o), Shape{}));
      graph_.outputs.push_back(outs.back());
    }
    graph_.add_node(type, attrs, ins, outs, name);
    graph_.nodes.back().version = lowest_op_version(type, attrs);  // a strided Slice is version 2
    const Node& node = graph_.nodes.back();
    KernelPlan plan;
    plan.node = &node;
    plan.graph = &graph_;
    plan.num_threads = threads_;
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
    plan.num_dst = sel_.num_outputs;
    for (int o = 0; o < sel_.num_outputs; ++o) {
      graph_.tensors[outs[o]].shape = dst[o];
      plan.dst_shapes[o] = dst[o];
      planned_out_[o] = dst[o];
    }
    out_shape_ = dst[sel_.index];
    constant_ = constant;
    constant_.resize(inputs.size(), false);
    info_ = KernelInfo{};
    kernel_.reset();
    VITRT_RETURN_IF_ERROR(backend.create_kernel(plan, &kernel_, &info_));
    if (!kernel_) return runtime_error("backend returned no kernel");
    workspace_.resize(info_.workspace_bytes / sizeof(float) + 1);
    return Status::Ok();
  }

  const Shape& planned_output_shape() const { return out_shape_; }
  const KernelInfo& info() const { return info_; }
  const Graph& graph() const { return graph_; }

  // Runs on `inputs` (actual shapes, e.g. a smaller batch). The selected output's shape is `out_shape` when
  // given, else inferred from the inputs (the planned one when inference fails, so that the kernel sees the
  // bad shapes); the other outputs get their inferred shapes. With `inplace`, dst[0] shares src[0]'s buffer.
  // `out` receives the selected output's shape and values.
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
    const int nout = sel_.num_outputs;
    Shape dst_shapes[kMaxOpOutputs];
    for (int o = 0; o < nout; ++o) dst_shapes[o] = planned_out_[o];
    Shape inferred[kMaxOpOutputs];
    if (infer_node_shapes(graph_.nodes.back(), shapes, n, inferred).ok())
      for (int o = 0; o < nout; ++o) dst_shapes[o] = inferred[o];
    if (out_shape) dst_shapes[sel_.index] = *out_shape;
    const Shape dst_shape = dst_shapes[sel_.index];
    AlignedBuffer out_bufs[kMaxOpOutputs];
    TensorRef dsts[kMaxOpOutputs];
    for (int o = 0; o < nout; ++o) {
      dsts[o].shape = dst_shapes[o];
      if (inplace && o == 0) {
        dsts[o].data = refs[0].data;  // src[0]'s buffer
      } else {
        out_bufs[o].resize(static_cast<size_t>(dst_shapes[o].numel()));
        out_bufs[o].fill(std::numeric_limits<float>::quiet_NaN());
        dsts[o].data = out_bufs[o].data();
      }
      args.dst[o] = &dsts[o];
    }
    args.num_dst = nout;
    const TensorRef& dst = dsts[sel_.index];
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

  // Direct access for tests that need unusual KernelArgs (null data, short workspace).
  Kernel* kernel() { return kernel_.get(); }

 private:
  Graph graph_;
  std::vector<bool> constant_;
  std::unique_ptr<Kernel> kernel_;
  KernelInfo info_;
  Shape out_shape_;
  Shape planned_out_[kMaxOpOutputs];
  OutputSelection default_selection_, sel_;
  int threads_ = 1;
  AlignedBuffer workspace_;
};

struct Comparison {
  bool ok = false;
  double max_err = 0;  // max |actual - reference|
  double tolerance = 0;
  int64_t worst = -1;  // index of max_err, or of the first non-finite mismatch
  std::string message;
};

// Compares `actual` with the float64 reference. tolerance = max(factor · max|ref32 - ref64|, rel ·
// max|ref64|): a backend may be a few times less accurate than PyTorch's float32 kernels, never more than
// that. NaN (an unwritten, poisoned element) or a non-finite value where the reference is finite always
// fails.
inline Comparison compare_to_reference(const std::vector<float>& actual, const std::vector<double>& ref64,
                                       const std::vector<double>& ref32, double factor = 4.0,
                                       double rel = 1e-6) {
  Comparison c;
  if (actual.size() != ref64.size() || ref32.size() < ref64.size()) {
    c.message = "size " + std::to_string(actual.size()) + " != expected " + std::to_string(ref64.size());
    return c;
  }
  double d32 = 0, scale = 0;
  for (size_t i = 0; i < ref64.size(); ++i) {
    d32 = std::fmax(d32, std::fabs(ref32[i] - ref64[i]));
    scale = std::fmax(scale, std::fabs(ref64[i]));
  }
  c.tolerance = std::fmax(factor * d32, std::fmax(rel * scale, 1e-30));
  c.ok = true;
  for (size_t i = 0; i < ref64.size(); ++i) {
    const double e = std::fabs(static_cast<double>(actual[i]) - ref64[i]);
    if (!(e <= c.tolerance)) {  // also catches NaN
      if (c.ok || std::isnan(e) || e > c.max_err) c.worst = static_cast<int64_t>(i);
      c.ok = false;
    }
    if (std::isnan(e))
      c.max_err = std::numeric_limits<double>::quiet_NaN();
    else if (!std::isnan(c.max_err))
      c.max_err = std::fmax(c.max_err, e);
  }
  c.message = "max error " + std::to_string(c.max_err) + " vs tolerance " + std::to_string(c.tolerance) +
              " (torch float32 error " + std::to_string(d32) + ", scale " + std::to_string(scale) + ")";
  if (!c.ok)
    c.message += "; at element " + std::to_string(c.worst) + ": got " +
                 std::to_string(actual[static_cast<size_t>(c.worst)]) + ", expected " +
                 std::to_string(ref64[static_cast<size_t>(c.worst)]);
  return c;
}

}  // namespace test
}  // namespace vitrt
