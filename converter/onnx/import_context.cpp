// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/import_context.h"

#include "onnx/onnx_file.h"
#include "ops/op_registry.h"

namespace vitrt::convert {

ImportContext::ImportContext(const onnx::GraphProto& graph, int64_t opset, std::vector<bool> needed,
                             const std::string& output)
    : graph_(graph),
      opset_(opset),
      consumed_(static_cast<size_t>(graph.node_size()), false),
      needed_(std::move(needed)) {
  for (int i = 0; i < graph.node_size(); ++i) {
    if (!imports(i)) continue;
    for (const std::string& in : graph.node(i).input())
      if (!in.empty()) {
        auto& list = consumers_[in];
        if (list.empty() || list.back() != i) list.push_back(i);
      }
  }
  for (const auto& o : graph.output())
    if (output.empty() || o.name() == output) outputs_.push_back(o.name());
  for (int i = 0; i < graph.node_size(); ++i)
    for (const std::string& out : graph.node(i).output())
      if (!out.empty()) producer_.emplace(out, i);
}

void ImportContext::add_input(const std::string& name, const std::vector<SymDim>& dims) {
  Shape s, a, b;
  s.rank = a.rank = b.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    s[static_cast<int>(d)] = dims[d].is_static() ? dims[d].c : kDynamicDim;
    a[static_cast<int>(d)] = dims[d].at(1);
    b[static_cast<int>(d)] = dims[d].at(2);
  }
  OnnxValue v;
  v.dims = dims;
  v.tensor = ir_.add_activation(name, s);
  ir_.inputs.push_back(v.tensor);
  s1_.resize(ir_.tensors.size());
  s2_.resize(ir_.tensors.size());
  s1_[v.tensor] = a;
  s2_[v.tensor] = b;
  values_[name] = std::move(v);
}

std::string ImportContext::where(const onnx::NodeProto& n) const {
  return onnx_node_where(n, opset_);
}

Status ImportContext::unsupported_node(const onnx::NodeProto& n, const std::string& what) const {
  return unsupported(where(n) + ": " + what);
}

Status ImportContext::bad_node(const onnx::NodeProto& n, const std::string& what) const {
  return bad_input(where(n) + ": " + what);
}

OnnxValue* ImportContext::find(const std::string& name) {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Status ImportContext::input(const onnx::NodeProto& n, int i, OnnxValue** v) {
  if (!has_input(n, i)) return bad_node(n, "input " + std::to_string(i) + " is missing");
  *v = find(n.input(i));
  auto p = producer_.find(n.input(i));
  if (!*v && p != producer_.end())
    return bad_node(n, "reads '" + n.input(i) + "', which node '" + graph_.node(p->second).name() + "' (" +
                           graph_.node(p->second).op_type() +
                           ") produces later: the graph is cyclic or not topologically sorted");
  if (!*v)
    return bad_node(n,
                    "reads '" + n.input(i) +
                        "', which is neither a graph input, an initializer nor the output of an earlier node "
                        "(a missing initializer, or a cyclic or unsorted graph)");
  return Status::Ok();
}

Status ImportContext::ir_tensor(OnnxValue* v, const std::string& name, int32_t* tensor) {
  if (v->pending_expand)
    return unsupported("'" + name + "' is an Expand to " + sym_dims_str(v->expanded) +
                       " read by an op other than Concat (the IR's Expand cannot broadcast to the batch)");
  if (!v->is_const) {
    *tensor = v->tensor;
    return Status::Ok();
  }
  if (v->ir_constant >= 0) {
    *tensor = v->ir_constant;
    return Status::Ok();
  }
  if (v->kind != ConstKind::kFloat)
    return unsupported("constant '" + name + "' of " + onnx_type_name(v->onnx_type) +
                       " is read by a computing op; this build computes in float32 only");
  std::vector<int64_t> shape = v->shape.empty() ? std::vector<int64_t>{1} : v->shape;
  for (int64_t d : shape)
    if (d < 1) return unsupported("constant '" + name + "' has an empty dimension " + int_dims_str(v->shape));
  v->ir_constant = add_constant(name, shape, v->f);
  *tensor = v->ir_constant;
  return Status::Ok();
}

int32_t ImportContext::add_constant(const std::string& name, const std::vector<int64_t>& shape,
                                    std::vector<float> values) {
  Shape s;
  Shape::from_vector(shape, &s);
  const int32_t t = ir_.add_constant(name, s, std::move(values));
  s1_.resize(ir_.tensors.size());
  s2_.resize(ir_.tensors.size());
  s1_[t] = s2_[t] = s;
  return t;
}

Status ImportContext::add_op(const onnx::NodeProto& n, OpType type, OpAttrs attrs,
                             std::vector<int32_t> inputs, const std::string& out_name, OnnxValue* out) {
  std::vector<OnnxValue> outs;
  VITRT_RETURN_IF_ERROR(add_op_outputs(n, type, std::move(attrs), std::move(inputs), {out_name}, &outs));
  *out = std::move(outs[0]);
  return Status::Ok();
}

Status ImportContext::add_op_outputs(const onnx::NodeProto& n, OpType type, OpAttrs attrs,
                                     std::vector<int32_t> inputs, const std::vector<std::string>& out_names,
                                     std::vector<OnnxValue>* outs) {
  const std::string& out_name = out_names.at(0);
  const int num_out = static_cast<int>(out_names.size());
  if (num_out < 1 || num_out > kMaxOpOutputs) return bad_node(n, "too many outputs");
  Node probe;
  probe.type = type;
  probe.version = lowest_op_version(type, attrs);  // e.g. a strided Slice is version 2
  probe.attrs = attrs;
  probe.inputs = inputs;
  probe.outputs.assign(out_names.size(), 0);
  probe.name = out_name;
  Shape d1[kMaxOpOutputs], d2[kMaxOpOutputs];
  const Shape* a[kMaxOpInputs] = {};
  const Shape* b[kMaxOpInputs] = {};
  if (inputs.size() > static_cast<size_t>(kMaxOpInputs)) return bad_node(n, "too many inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    a[i] = inputs[i] == kAbsent ? nullptr : &s1_[inputs[i]];
    b[i] = inputs[i] == kAbsent ? nullptr : &s2_[inputs[i]];
  }
  const int ni = static_cast<int>(inputs.size());
  Status st = infer_node_shapes(probe, a, ni, d1);
  if (st.ok()) st = infer_node_shapes(probe, b, ni, d2);
  if (!st.ok()) return bad_node(n, "as " + std::string(op_type_name(type)) + ": " + st.message());
  outs->assign(out_names.size(), OnnxValue{});
  for (int o = 0; o < num_out; ++o) {
    if (d1[o].rank != d2[o].rank) return bad_node(n, "the rank of its result depends on the batch size");
    OnnxValue& v = (*outs)[static_cast<size_t>(o)];
    v.is_const = false;
    for (int d = 0; d < d1[o].rank; ++d) {
      const int64_t k = d2[o][d] - d1[o][d];
      if (k < 0) return bad_node(n, "a dimension of its result shrinks as the batch grows");
      v.dims.push_back(SymDim{d1[o][d] - k, k});
    }
  }
  std::vector<int32_t> tensors;
  for (int o = 0; o < num_out; ++o) {
    OnnxValue& v = (*outs)[static_cast<size_t>(o)];
    v.tensor = ir_.add_activation(out_names[static_cast<size_t>(o)], Shape());
    s1_.resize(ir_.tensors.size());
    s2_.resize(ir_.tensors.size());
    s1_[v.tensor] = d1[o];
    s2_[v.tensor] = d2[o];
    tensors.push_back(v.tensor);
  }
  std::string node_name = n.name().empty() ? out_name : n.name();
  ir_.add_node(type, std::move(attrs), std::move(inputs), std::move(tensors), node_name);
  ir_.nodes.back().version = probe.version;
  return Status::Ok();
}

const std::vector<int>& ImportContext::consumers(const std::string& name) const {
  static const std::vector<int> none;
  auto it = consumers_.find(name);
  return it == consumers_.end() ? none : it->second;
}

bool ImportContext::is_graph_output(const std::string& name) const {
  for (const auto& o : outputs_)
    if (o == name) return true;
  return false;
}

void ImportContext::release_constants_read_last_by(int node) {
  for (const std::string& in : graph_.node(node).input()) {
    if (in.empty() || is_graph_output(in)) continue;
    const auto c = consumers_.find(in);
    if (c == consumers_.end() || c->second.back() > node) continue;
    const auto v = values_.find(in);
    if (v != values_.end() && v->second.is_const) values_.erase(v);
  }
}

int ImportContext::single_consumer(const std::string& name) const {
  const auto& c = consumers(name);
  if (c.size() != 1 || is_graph_output(name)) return -1;
  // The same node reading the value twice counts as one reader.
  return c[0];
}

int ImportContext::producer(const std::string& name) const {
  auto it = producer_.find(name);
  return it == producer_.end() ? -1 : it->second;
}

const onnx::AttributeProto* ImportContext::attr(const onnx::NodeProto& n, const std::string& name) const {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t ImportContext::attr_int(const onnx::NodeProto& n, const std::string& name, int64_t def) const {
  const auto* a = attr(n, name);
  return a && a->type() == onnx::AttributeProto::INT ? a->i() : def;
}

float ImportContext::attr_float(const onnx::NodeProto& n, const std::string& name, float def) const {
  const auto* a = attr(n, name);
  return a && a->type() == onnx::AttributeProto::FLOAT ? a->f() : def;
}

std::string ImportContext::attr_string(const onnx::NodeProto& n, const std::string& name,
                                       const std::string& def) const {
  const auto* a = attr(n, name);
  return a && a->type() == onnx::AttributeProto::STRING ? a->s() : def;
}

std::vector<int64_t> ImportContext::attr_ints(const onnx::NodeProto& n, const std::string& name) const {
  const auto* a = attr(n, name);
  if (!a) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Status const_ints(ImportContext& cx, const onnx::NodeProto& n, const OnnxValue& v, const std::string& what,
                  std::vector<int64_t>* out) {
  if (!v.is_const) return cx.unsupported_node(n, what + " must be a constant known at import");
  if (v.kind != ConstKind::kInt) return cx.bad_node(n, what + " must be an integer tensor");
  out->clear();
  for (const SymDim& d : v.i) {
    if (!d.is_static())
      return cx.unsupported_node(n, what + " " + sym_dims_str(v.i) + " depends on the batch size");
    out->push_back(d.c);
  }
  return Status::Ok();
}

Status onnx_axis(ImportContext& cx, const onnx::NodeProto& n, int64_t axis, int rank, int* out) {
  if (axis < -rank || axis >= rank)
    return cx.bad_node(n,
                       "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return Status::Ok();
}

Status onnx_flatten_axis(ImportContext& cx, const onnx::NodeProto& n, int rank, int* out) {
  const int64_t axis = cx.attr_int(n, "axis", 1);
  if (axis < -rank || axis > rank)
    return cx.bad_node(n, "axis " + std::to_string(axis) + " is out of range [-" + std::to_string(rank) +
                              ", " + std::to_string(rank) + "] for rank " + std::to_string(rank));
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return Status::Ok();
}

}  // namespace vitrt::convert
