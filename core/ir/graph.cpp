// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "ir/graph.h"

namespace vitrt {

int32_t Graph::add_constant(const std::string& name, const Shape& shape, std::vector<float> values) {
  auto storage = std::make_shared<std::vector<float>>(std::move(values));
  Tensor t;
  t.name = name;
  t.dtype = DType::kFloat32;
  t.shape = shape;
  t.is_constant = true;
  t.constant.data = reinterpret_cast<const uint8_t*>(storage->data());
  t.constant.size = storage->size() * sizeof(float);
  t.constant.owner = storage;
  return add_tensor(std::move(t));
}

int32_t Graph::add_activation(const std::string& name, const Shape& shape, DType dtype) {
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = shape;
  return add_tensor(std::move(t));
}

void Graph::add_node(OpType type, OpAttrs attrs, std::vector<int32_t> in, std::vector<int32_t> out,
                     std::string name) {
  Node n;
  n.type = type;
  n.attrs = std::move(attrs);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.name = std::move(name);
  nodes.push_back(std::move(n));
}

Status Graph::validate_structure() const {
  const int32_t nt = static_cast<int32_t>(tensors.size());
  std::vector<int8_t> written(tensors.size(), 0);
  for (int32_t i : inputs) {
    if (i < 0 || i >= nt) return bad_model("graph input index " + std::to_string(i) + " out of range");
    if (tensors[i].is_constant) return bad_model("graph input '" + tensors[i].name + "' is a constant");
    written[i] = 1;
  }
  for (int32_t i = 0; i < nt; ++i)
    if (tensors[i].is_constant) written[i] = 1;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    const std::string where = "op #" + std::to_string(n) + " (" + op_type_name(node.type) +
                              (node.name.empty() ? "" : " '" + node.name + "'") + ")";
    if (node.inputs.size() > static_cast<size_t>(kMaxOpInputs))
      return bad_model(where + ": too many inputs (" + std::to_string(node.inputs.size()) + ")");
    if (node.outputs.empty() || node.outputs.size() > static_cast<size_t>(kMaxOpOutputs))
      return bad_model(where + ": bad output count (" + std::to_string(node.outputs.size()) + ")");
    for (int32_t i : node.inputs) {
      if (i == kAbsent) continue;
      if (i < 0 || i >= nt)
        return bad_model(where + ": input tensor index " + std::to_string(i) + " out of range");
      if (!written[i])
        return bad_model(where + ": reads tensor '" + tensors[i].name +
                         "' before any op writes it (ops must be in topological order)");
    }
    for (int32_t o : node.outputs) {
      if (o < 0 || o >= nt)
        return bad_model(where + ": output tensor index " + std::to_string(o) + " out of range");
      if (written[o])
        return bad_model(where + ": tensor '" + tensors[o].name + "' is written twice or is constant");
      written[o] = 1;
    }
  }
  if (outputs.empty()) return bad_model("graph has no outputs");
  for (int32_t o : outputs) {
    if (o < 0 || o >= nt) return bad_model("graph output index " + std::to_string(o) + " out of range");
    if (!written[o]) return bad_model("graph output '" + tensors[o].name + "' is never produced");
  }
  if (inputs.empty()) return bad_model("graph has no inputs");
  return Status::Ok();
}

}  // namespace vitrt
