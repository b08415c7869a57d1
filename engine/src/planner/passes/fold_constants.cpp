// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fold_constants: an op whose every input is a constant is run once, at plan time, on the reference kernels,
// and its outputs become constants (kept by the session's graph, placed in the persistent arena). Weight-side
// chains the converter or a primitive emission leaves behind (a transposed weight, a pre-multiplied scale,
// a reshaped bias) then cost nothing per run.
#include <cstring>

#include "ops/op_registry.h"
#include "planner/graph_edit.h"
#include "planner/pass.h"

namespace vitrt {
namespace {

constexpr uint64_t kMaxFoldedBytes = 64ull << 20;  // larger results stay ops: folding must not bloat memory

class FoldConstantsPass final : public Pass {
 public:
  const char* name() const override { return "fold_constants"; }
  const char* description() const override {
    return "evaluate ops whose inputs are all constants at plan time";
  }

  Status run(Graph& g, const PassContext&, bool* modified) override {
    std::unique_ptr<Backend> ref = create_reference_backend();
    std::vector<bool> erase(g.nodes.size(), false);
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      const Node& node = g.nodes[n];
      bool all_constant = !node.inputs.empty();
      for (int32_t i : node.inputs) all_constant = all_constant && (i == kAbsent || g.tensors[i].is_constant);
      for (int32_t o : node.outputs) all_constant = all_constant && !is_graph_output(g, o);
      if (!all_constant || !ref->supports(node)) continue;
      bool folded = false;
      VITRT_RETURN_IF_ERROR(fold(g, n, *ref, &folded));
      erase[n] = folded;
      *modified = *modified || folded;
    }
    if (*modified) erase_nodes(g, erase);
    return Status::Ok();
  }

 private:
  // Runs node n; on success its outputs become owned constants. Leaves the graph untouched (folded = false)
  // when the result would be too large or is not float32.
  static Status fold(Graph& g, size_t n, Backend& ref, bool* folded) {
    const Node& node = g.nodes[n];
    KernelPlan kp;
    kp.node = &node;
    kp.graph = &g;
    kp.num_src = static_cast<int>(node.inputs.size());
    kp.num_dst = static_cast<int>(node.outputs.size());
    const Shape* src_shapes[kMaxOpInputs] = {};
    for (int i = 0; i < kp.num_src; ++i) {
      const int32_t t = node.inputs[i];
      if (t == kAbsent) continue;
      if (g.tensors[t].dtype != DType::kFloat32) return Status::Ok();
      kp.src_tensors[i] = &g.tensors[t];
      kp.src_shapes[i] = g.tensors[t].shape;
      src_shapes[i] = &kp.src_shapes[i];
    }
    const std::string where = describe_node(node, n);
    VITRT_RETURN_IF_ERROR(infer_node_shapes(node, src_shapes, kp.num_src, kp.dst_shapes).with_context(where));
    std::vector<std::shared_ptr<std::vector<float>>> results(kp.num_dst);
    TensorRef src_refs[kMaxOpInputs], dst_refs[kMaxOpOutputs];
    KernelArgs args;
    args.num_src = kp.num_src;
    args.num_dst = kp.num_dst;
    for (int o = 0; o < kp.num_dst; ++o) {
      int64_t numel = 0;
      if (!checked_numel(kp.dst_shapes[o], &numel) || numel < 0 ||
          static_cast<uint64_t>(numel) * sizeof(float) > kMaxFoldedBytes)
        return Status::Ok();
      results[o] = std::make_shared<std::vector<float>>(static_cast<size_t>(numel) + 16);  // + over-read pad
      dst_refs[o].data = results[o]->data();
      dst_refs[o].shape = kp.dst_shapes[o];
      args.dst[o] = &dst_refs[o];
    }
    for (int i = 0; i < kp.num_src; ++i) {
      if (!kp.src_tensors[i]) continue;
      src_refs[i].data = const_cast<uint8_t*>(kp.src_tensors[i]->constant.data);
      src_refs[i].shape = kp.src_shapes[i];
      args.src[i] = &src_refs[i];
    }
    std::unique_ptr<Kernel> kernel;
    KernelInfo info;
    VITRT_RETURN_IF_ERROR(ref.create_kernel(kp, &kernel, &info).with_context(where));
    std::vector<float> workspace((info.workspace_bytes + sizeof(float) - 1) / sizeof(float) + 16);
    args.workspace = workspace.data();
    args.workspace_bytes = info.workspace_bytes;
    VITRT_RETURN_IF_ERROR(kernel->run(args).with_context(where + " (folding constants)"));
    for (int o = 0; o < kp.num_dst; ++o) {
      Tensor& t = g.tensors[node.outputs[o]];
      t.shape = kp.dst_shapes[o];
      t.is_constant = true;
      // A whole new ConstantData: heap memory, so file_mapped stays false (its pages are never given back).
      t.constant = ConstantData{reinterpret_cast<const uint8_t*>(results[o]->data()),
                                static_cast<size_t>(kp.dst_shapes[o].numel()) * sizeof(float), results[o]};
    }
    *folded = true;
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Pass> create_fold_constants_pass() {
  return std::make_unique<FoldConstantsPass>();
}

}  // namespace vitrt
