// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/fold_by_reference.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <variant>

#include "backends/backend.h"
#include "common/checked_math.h"
#include "onnx/lower_ops.h"
#include "onnx/onnx_limits.h"

namespace vitrt::convert {
namespace {

constexpr size_t kAlign = 64;  // Backend::alignment() of the reference backend

std::shared_ptr<float> aligned_floats(int64_t count) {
  const size_t bytes = (static_cast<size_t>(count) * sizeof(float) + kAlign - 1) / kAlign * kAlign;
  return std::shared_ptr<float>(static_cast<float*>(std::aligned_alloc(kAlign, bytes ? bytes : kAlign)),
                                std::free);
}

// Elements read plus multiply-adds of one evaluation, roughly: a contraction reads K operands per result
// element, any other op about each operand once. In double: hostile shapes must not overflow it.
double work_of(ImportContext& cx, const Node& node) {
  double work = 0;
  for (int32_t t : node.inputs)
    if (t != kAbsent) work += static_cast<double>(cx.shape1(t).numel());
  const Shape& out = cx.shape1(node.outputs[0]);
  double per_out = 1;
  if (node.type == OpType::kMatMul && node.inputs.size() >= 2) {
    per_out = static_cast<double>(cx.shape1(node.inputs[0]).dim(-1));
  } else if (node.type == OpType::kLinear && node.inputs.size() >= 2) {
    per_out = static_cast<double>(cx.shape1(node.inputs[1]).dim(-1));  // weight [N,K]
  } else if (node.type == OpType::kConv2d && node.inputs.size() >= 2) {
    const Shape& w = cx.shape1(node.inputs[1]);  // [Cout, Cin/groups, kh, kw]
    per_out = static_cast<double>(w.numel()) / static_cast<double>(w[0] > 0 ? w[0] : 1);
  } else if (const auto* pool = std::get_if<Pool2dAttrs>(&node.attrs)) {
    per_out = static_cast<double>(pool->kernel_h) * pool->kernel_w;
  }
  return work + static_cast<double>(out.numel()) * per_out;
}

// Runs IR nodes [first, end) of the graph being built, whose inputs are constants or outputs of earlier nodes
// of the range, with the reference backend; each output becomes a constant tensor holding its values. A
// kernel that declines or fails gives *why (the ops then stay activations, computed at run time as before
// folding existed, where the chosen backend may well take them).
Status evaluate(ImportContext& cx, const onnx::NodeProto& n, size_t first, std::string* why) {
  Graph& ir = cx.ir();
  std::unique_ptr<Backend> ref = create_reference_backend();
  for (size_t k = first; k < ir.nodes.size(); ++k) {
    const Node& node = ir.nodes[k];
    KernelPlan plan;
    plan.node = &node;
    plan.graph = &ir;
    plan.num_src = static_cast<int>(node.inputs.size());
    plan.num_dst = static_cast<int>(node.outputs.size());
    TensorRef src[kMaxOpInputs], dst[kMaxOpOutputs];
    std::shared_ptr<float> dst_data[kMaxOpOutputs];
    KernelArgs args;
    args.num_src = plan.num_src;
    args.num_dst = plan.num_dst;
    for (int i = 0; i < plan.num_src; ++i) {
      const int32_t t = node.inputs[i];
      if (t == kAbsent) continue;
      plan.src_tensors[i] = &ir.tensors[t];
      plan.src_shapes[i] = cx.shape1(t);
      src[i].data = const_cast<uint8_t*>(ir.tensors[t].constant.data);  // kernels only read src
      src[i].shape = cx.shape1(t);
      args.src[i] = &src[i];
    }
    for (int o = 0; o < plan.num_dst; ++o) {
      const Shape& s = cx.shape1(node.outputs[o]);
      plan.dst_shapes[o] = s;
      dst_data[o] = aligned_floats(s.numel());
      if (!dst_data[o]) return out_of_memory(cx.where(n) + ": out of memory while folding it");
      dst[o].data = dst_data[o].get();
      dst[o].shape = s;
      args.dst[o] = &dst[o];
    }
    std::unique_ptr<Kernel> kernel;
    KernelInfo info;
    Status st = ref->create_kernel(plan, &kernel, &info);
    std::shared_ptr<float> workspace;
    if (st.ok() && info.workspace_bytes) {
      workspace =
          aligned_floats(static_cast<int64_t>((info.workspace_bytes + sizeof(float) - 1) / sizeof(float)));
      if (!workspace) return out_of_memory(cx.where(n) + ": out of memory while folding it");
      args.workspace = workspace.get();
      args.workspace_bytes = info.workspace_bytes;
    }
    if (st.ok()) st = kernel->run(args);
    if (!st.ok()) {
      *why = st.message().empty() ? "no reason given" : st.message();
      for (size_t j = first; j < k; ++j)
        for (int32_t o : ir.nodes[j].outputs) {
          ir.tensors[o].is_constant = false;
          ir.tensors[o].constant = ConstantData{};
          ir.tensors[o].shape = Shape();
        }
      return Status::Ok();
    }
    for (int o = 0; o < plan.num_dst; ++o) {
      Tensor& t = ir.tensors[node.outputs[o]];
      t.is_constant = true;
      t.shape = dst[o].shape;
      t.constant = ConstantData{reinterpret_cast<const uint8_t*>(dst_data[o].get()),
                                static_cast<size_t>(dst[o].shape.numel()) * sizeof(float), dst_data[o]};
    }
  }
  return Status::Ok();
}

// The constant an evaluated IR tensor now holds, as the ONNX value `v` (an activation with static dims).
void bind_constant(const Tensor& t, OnnxValue* v) {
  OnnxValue c;
  c.is_const = true;
  for (const SymDim& d : v->dims) c.shape.push_back(d.c);
  const float* f = t.f32();
  const size_t count = t.constant.size / sizeof(float);
  if (v->boolean) {  // a comparison's 0/1 (docs/onnx.md) becomes an ONNX bool constant again
    c.kind = ConstKind::kInt;
    c.onnx_type = onnx::TensorProto::BOOL;
    c.i.reserve(count);
    for (size_t e = 0; e < count; ++e) c.i.push_back(SymDim::of(f[e] != 0.0f));
  } else {
    c.kind = ConstKind::kFloat;
    c.onnx_type = onnx::TensorProto::FLOAT;
    c.f.assign(f, f + count);
  }
  *v = std::move(c);
}

}  // namespace

Status lower_or_fold(ImportContext& cx, int index, bool* folded, std::string* log) {
  *folded = false;
  const onnx::NodeProto& n = cx.onnx_graph().node(index);
  bool all_const = true;
  for (const std::string& name : n.input()) {
    if (name.empty()) continue;
    const OnnxValue* v = cx.find(name);
    all_const &= v && v->is_const && !v->pending_expand;
  }
  if (!all_const) return lower_node(cx, index);
  Graph& ir = cx.ir();
  const size_t first_node = ir.nodes.size(), first_tensor = ir.tensors.size();
  // The lowering may take a reader of the result along (a MatMul's bias Add): its outputs are bound too.
  std::vector<int> readers;
  for (const std::string& o : n.output())
    for (int c : cx.consumers(o))
      if (!cx.consumed(c)) readers.push_back(c);
  VITRT_RETURN_IF_ERROR(lower_node(cx, index));
  std::vector<std::string> bound(n.output().begin(), n.output().end());
  for (int c : readers)
    if (cx.consumed(c))
      bound.insert(bound.end(), cx.onnx_graph().node(c).output().begin(),
                   cx.onnx_graph().node(c).output().end());
  // Everything the ops read must be a constant or their own result, every result small enough and the work
  // bounded.
  double work = 0;
  for (size_t k = first_node; k < ir.nodes.size(); ++k) {
    for (int32_t t : ir.nodes[k].inputs)
      if (t != kAbsent && !ir.tensors[t].is_constant && static_cast<size_t>(t) < first_tensor)
        return Status::Ok();
    for (int32_t t : ir.nodes[k].outputs) {
      const Shape& s = cx.shape1(t);
      if (!s.is_static()) return Status::Ok();
      int64_t count = 1;
      bool over = false;
      for (int d = 0; d < s.rank && !over; ++d)
        over = !checked_mul(count, s[d], &count) || count > kMaxFoldedElements;
      if (over) {
        *log += "onnx: " + cx.where(n) + " not folded: its result " + s.str() +
                " would be a constant of more than " + std::to_string(kMaxFoldedElements) +
                " elements (the limit on folded constants); computed at run time\n";
        return Status::Ok();
      }
    }
    work += work_of(cx, ir.nodes[k]);
  }
  if (work > static_cast<double>(kMaxFoldedWork)) {
    char about[32];
    std::snprintf(about, sizeof about, "%.3g", work);
    *log += "onnx: " + cx.where(n) + " not folded: evaluating it takes about " + about +
            " operations, more than the " + std::to_string(kMaxFoldedWork) +
            " allowed for folding one node; computed at run time\n";
    return Status::Ok();
  }
  std::string why;
  VITRT_RETURN_IF_ERROR(evaluate(cx, n, first_node, &why));
  if (!why.empty()) {
    *log += "onnx: " + cx.where(n) + " not folded: the reference kernel declined it (" + why +
            "); computed at run time\n";
    return Status::Ok();
  }
  for (const std::string& name : bound) {
    OnnxValue* v = name.empty() ? nullptr : cx.find(name);
    if (!v) continue;
    if (v->is_const) {
      if (v->ir_constant >= static_cast<int32_t>(first_tensor)) v->ir_constant = -1;
      continue;
    }
    if (v->tensor >= static_cast<int32_t>(first_tensor)) bind_constant(ir.tensors[v->tensor], v);
  }
  // The inputs' constants materialised for the lowering go with the ops (a reader materialises them again).
  for (const std::string& name : n.input()) {
    OnnxValue* v = name.empty() ? nullptr : cx.find(name);
    if (v && v->ir_constant >= static_cast<int32_t>(first_tensor)) v->ir_constant = -1;
  }
  cx.drop_ir_since(first_node, first_tensor);
  *folded = true;
  return Status::Ok();
}

}  // namespace vitrt::convert
