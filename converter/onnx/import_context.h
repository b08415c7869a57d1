// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The state of one ONNX import: the ONNX graph being walked, what each value name stands for, and the IR
// graph being built with its shapes at batch 1 and 2 (from which every activation's symbolic shape c + k·B
// follows). Shared by the folding (fold_ops.cpp), pattern (patterns.cpp) and lowering (lower_ops.cpp) steps.
#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/onnx_tensor.h"
#include "onnx/onnx_value.h"

namespace vitrt::convert {

class ImportContext {
 public:
  // `needed`: the nodes to import (by index; empty: all) and `output`, the one graph output they compute ("":
  // every output), as OnnxImportOptions::output selects them; the nodes left out neither consume values nor
  // make their outputs graph outputs for the patterns' single-reader checks.
  ImportContext(const onnx::GraphProto& graph, int64_t opset, std::vector<bool> needed = {},
                const std::string& output = "");

  // Whether node i is imported (OnnxImportOptions::output).
  bool imports(int i) const { return needed_.empty() || needed_[static_cast<size_t>(i)]; }

  const onnx::GraphProto& onnx_graph() const { return graph_; }
  int64_t opset() const { return opset_; }
  Graph& ir() { return ir_; }
  ExternalDataContext& external() { return ext_; }

  // "node 'name' (Op, opset N)" for messages.
  std::string where(const onnx::NodeProto& n) const;
  // unsupported("node ... : what"): the importer has no mapping for this op, attribute or form.
  Status unsupported_node(const onnx::NodeProto& n, const std::string& what) const;
  // bad_input("node ... : what"): the node is malformed.
  Status bad_node(const onnx::NodeProto& n, const std::string& what) const;

  bool has_input(const onnx::NodeProto& n, int i) const { return i < n.input_size() && !n.input(i).empty(); }
  // The value of input i; a bad_input naming the node when it is missing.
  Status input(const onnx::NodeProto& n, int i, OnnxValue** v);
  OnnxValue* find(const std::string& name);
  void set(const std::string& name, OnnxValue v) { values_[name] = std::move(v); }
  // Binds output `name` to the same value as `src` (Identity, Dropout, Cast to float).
  void alias(const std::string& name, const OnnxValue& src) { values_[name] = src; }

  // The IR tensor of a value: an activation's tensor, or a float constant materialised once (a 0-d
  // constant becomes [1]). `name` names a new constant.
  Status ir_tensor(OnnxValue* v, const std::string& name, int32_t* tensor);
  // Adds an IR node with one output named `out_name`; infers its shape at batch 1 and 2 and fills `out`
  // with the activation and its symbolic shape. Errors name the ONNX node.
  Status add_op(const onnx::NodeProto& n, OpType type, OpAttrs attrs, std::vector<int32_t> inputs,
                const std::string& out_name, OnnxValue* out);
  // As add_op, for an op with one output per name of `out_names` (TopK's values and indices); `outs` receives
  // them in order.
  Status add_op_outputs(const onnx::NodeProto& n, OpType type, OpAttrs attrs, std::vector<int32_t> inputs,
                        const std::vector<std::string>& out_names, std::vector<OnnxValue>* outs);
  // A fresh IR constant (not bound to an ONNX name).
  int32_t add_constant(const std::string& name, const std::vector<int64_t>& shape, std::vector<float> values);

  // Nodes reading each value name (indices into the ONNX graph's node list), and nodes already consumed by a
  // recognised pattern.
  const std::vector<int>& consumers(const std::string& name) const;
  bool is_graph_output(const std::string& name) const;
  void consume(int node) { consumed_[node] = true; }
  bool consumed(int node) const { return consumed_[node]; }
  // Forgets the constants no node after `node` reads (and no graph output is): once node `node` is imported
  // (lowered, folded or consumed by a pattern), their values live on only in the IR constants made from
  // them, so a model's weights are not held twice (docs/onnx.md, Cost of an import). A later lookup of such
  // a name finds nothing, as for a name never defined.
  void release_constants_read_last_by(int node);

  // A model exported with a static batch N (torch.onnx.export without dynamic_axes): its input's first
  // dimension was N in the file; 0 when it was symbolic. Reshape targets that start with N and constants of
  // batch 1 concatenated to batch-carrying tensors are then read as the batch (docs/onnx.md).
  int64_t static_batch() const { return static_batch_; }
  void set_static_batch(int64_t n) { static_batch_ = n; }
  // The one node reading `name`, or -1 when there are none, several, or it is a graph output.
  int single_consumer(const std::string& name) const;
  // The node writing `name`, or -1 (an input, an initializer, or no such value).
  int producer(const std::string& name) const;

  // Attributes.
  const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) const;
  int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t def) const;
  float attr_float(const onnx::NodeProto& n, const std::string& name, float def) const;
  std::string attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name) const;

  // Adds the graph input `name` with shape `dims` (kDynamicDim where the batch is) and binds it.
  void add_input(const std::string& name, const std::vector<SymDim>& dims);

  // Drops the IR nodes and tensors added after the first `nodes` and `tensors` (fold_by_reference.h lowers
  // a node of constants, evaluates the ops it added and then removes them).
  void drop_ir_since(size_t nodes, size_t tensors) {
    ir_.nodes.resize(nodes);
    ir_.tensors.resize(tensors);
    s1_.resize(tensors);
    s2_.resize(tensors);
  }

  // Static shape of an activation at batch 1 (for ops whose geometry must be static apart from the batch).
  const Shape& shape1(int32_t tensor) const { return s1_[tensor]; }

 private:
  const onnx::GraphProto& graph_;
  int64_t opset_;
  Graph ir_;
  std::vector<Shape> s1_, s2_;
  std::map<std::string, OnnxValue> values_;
  std::map<std::string, std::vector<int>> consumers_;
  std::map<std::string, int> producer_;
  std::vector<bool> consumed_;
  std::vector<bool> needed_;
  std::vector<std::string> outputs_;
  ExternalDataContext ext_;
  int64_t static_batch_ = 0;
};

// Static int64 list from a constant (axes, pads, shape); bad_input naming `what` when it is not constant or
// holds the batch.
Status const_ints(ImportContext& cx, const onnx::NodeProto& n, const OnnxValue& v, const std::string& what,
                  std::vector<int64_t>* out);
// Normalises an ONNX axis (negative counts from the end) for `rank`; bad_input naming the node otherwise.
Status onnx_axis(ImportContext& cx, const onnx::NodeProto& n, int64_t axis, int rank, int* out);
// Flatten's `axis` attribute (default 1) for an input of `rank`: it lies in [-rank, rank], a negative one
// counting from the end (-1 keeps the last axis apart), unlike a plain axis.
Status onnx_flatten_axis(ImportContext& cx, const onnx::NodeProto& n, int rank, int* out);

}  // namespace vitrt::convert
