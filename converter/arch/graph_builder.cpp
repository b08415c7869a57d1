// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "arch/graph_builder.h"

#include <cmath>

#include "arch/primitive_emit.h"
#include "ir/shape_propagation.h"
#include "ops/op_registry.h"

namespace vitrt::convert {
namespace {

bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
}

std::string dims_str(const std::vector<int64_t>& d) {
  Shape s;
  Shape::from_vector(d, &s);
  return s.str();
}

}  // namespace

std::vector<int64_t> GraphBuilder::shape_of(const std::string& key) const {
  auto it = ckpt_.tensors.find(key);
  return it == ckpt_.tensors.end() ? std::vector<int64_t>{} : it->second.shape;
}

int32_t GraphBuilder::input(const std::string& name, const Shape& shape) {
  Shape declared = shape;
  declared[0] = kDynamicDim;
  const int32_t t = graph_.add_activation(name, declared);
  shapes_.resize(graph_.tensors.size());
  shapes_[t] = shape;
  graph_.inputs.push_back(t);
  return t;
}

int32_t GraphBuilder::weight(const std::string& key, const std::vector<int64_t>& expected) {
  used_.insert(key);
  auto it = ckpt_.tensors.find(key);
  std::vector<int64_t> dims = expected;
  std::vector<float> values;
  if (it == ckpt_.tensors.end()) {
    missing_.push_back(key + (expected.empty() ? "" : " " + dims_str(expected)));
  } else if (!expected.empty() && it->second.shape != expected) {
    errors_.push_back("'" + key + "' has shape " + dims_str(it->second.shape) + ", expected " +
                      dims_str(expected));
  } else {
    dims = it->second.shape;
    values = float_values(key);
  }
  // A missing or misshapen weight keeps the expected shape but gets no values: the graph is never finished
  // (finish() reports it), and a zero placeholder of a shape made of other tensors' sizes could be enormous.
  Shape s;
  if (!Shape::from_vector(dims, &s)) {
    errors_.push_back("'" + key + "' has too many dimensions");
    s = Shape{1};
    values.clear();
  }
  return constant(key, s, std::move(values));
}

std::vector<std::string> GraphBuilder::keys_under(const std::string& prefix, size_t limit) const {
  std::vector<std::string> keys;
  for (auto it = ckpt_.tensors.lower_bound(prefix);
       it != ckpt_.tensors.end() && keys.size() < limit && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it)
    keys.push_back(it->first);
  return keys;
}

const std::vector<float>& GraphBuilder::float_values(const std::string& key) {
  const CheckpointTensor& t = ckpt_.tensors.at(key);
  if (!checked_.insert(key).second) return t.values;
  if (!is_floating(t.source_dtype)) {
    errors_.push_back("'" + key + "' has dtype " +
                      (t.source_type.empty() ? std::string(dtype_name(t.source_dtype)) : t.source_type) +
                      ", but the architecture uses it as a floating-point weight (float32, float16, "
                      "bfloat16 or float64)");
    return t.values;
  }
  for (size_t i = 0; i < t.values.size(); ++i)
    if (!std::isfinite(t.values[i])) {
      errors_.push_back("'" + key + "' holds " + (std::isnan(t.values[i]) ? "NaN" : "an infinity") +
                        " at element " + std::to_string(i) + " (row-major index, of " +
                        std::to_string(t.values.size()) + ")");
      break;
    }
  return t.values;
}

bool GraphBuilder::can_generate(const std::string& name, int64_t rows, int64_t cols) {
  if (rows >= 0 && cols >= 0 && (cols == 0 || rows <= kMaxGeneratedElements / cols)) return true;
  errors_.push_back(name + ": " + std::to_string(rows) + " x " + std::to_string(cols) +
                    " generated values, more than the limit of " + std::to_string(kMaxGeneratedElements) +
                    " (is --image-size, or the input size in the checkpoint's args, too large?)");
  return false;
}

int32_t GraphBuilder::constant(const std::string& name, const Shape& shape, std::vector<float> values) {
  const int32_t t = graph_.add_constant(name, shape, std::move(values));
  shapes_.resize(graph_.tensors.size());
  shapes_[t] = shape;
  return t;
}

int32_t GraphBuilder::op(OpType type, OpAttrs attrs, std::vector<int32_t> inputs, const std::string& name) {
  return op_outputs(type, std::move(attrs), std::move(inputs), name, {name})[0];
}

std::vector<int32_t> GraphBuilder::op_outputs(OpType type, OpAttrs attrs, std::vector<int32_t> inputs,
                                              const std::string& name,
                                              const std::vector<std::string>& output_names) {
  if (output_names.empty() || output_names.size() > static_cast<size_t>(kMaxOpOutputs)) {
    errors_.push_back(name + ": " + std::to_string(output_names.size()) + " outputs requested");
    return std::vector<int32_t>(output_names.size(), 0);
  }
  if (emit_primitive_ && !in_primitive_) {
    in_primitive_ = true;
    std::vector<int32_t> outs;
    const bool expanded = emit_primitive(*this, type, attrs, inputs, name, output_names, &outs);
    in_primitive_ = false;
    if (expanded) return outs;
  }
  const Shape* src[kMaxOpInputs] = {};
  for (size_t i = 0; i < inputs.size() && i < static_cast<size_t>(kMaxOpInputs); ++i)
    src[i] = inputs[i] == kAbsent ? nullptr : &shapes_[inputs[i]];
  Node probe;
  probe.type = type;
  probe.attrs = attrs;
  probe.inputs = inputs;
  probe.outputs.assign(output_names.size(), 0);
  probe.name = name;
  Shape dst[kMaxOpOutputs];
  Status st = infer_node_shapes(probe, src, static_cast<int>(inputs.size()), dst);
  if (!st.ok()) {
    // Only report the first shape error: later ones are usually consequences of it.
    if (errors_.empty() && missing_.empty()) errors_.push_back(name + ": " + st.message());
    for (size_t o = 0; o < output_names.size(); ++o) dst[o] = Shape{1};
  }
  std::vector<int32_t> outs;
  for (size_t o = 0; o < output_names.size(); ++o) {
    outs.push_back(graph_.add_activation(output_names[o], Shape()));
    shapes_.resize(graph_.tensors.size());
    shapes_[outs.back()] = dst[o];
  }
  graph_.add_node(type, std::move(attrs), std::move(inputs), outs, name);
  return outs;
}

Status GraphBuilder::finish(Graph* out) {
  std::vector<std::string> unused;
  for (const auto& kv : ckpt_.tensors)
    if (!used_.count(kv.first)) unused.push_back(kv.first + " " + dims_str(kv.second.shape));
  if (!missing_.empty() || !unused.empty() || !errors_.empty()) {
    std::string m;
    auto list = [&m](const char* title, const std::vector<std::string>& items) {
      if (items.empty()) return;
      m += std::string("\n  ") + title + " (" + std::to_string(items.size()) + "):";
      for (size_t i = 0; i < items.size() && i < 40; ++i) m += "\n    " + items[i];
      if (items.size() > 40) m += "\n    ... and " + std::to_string(items.size() - 40) + " more";
    };
    list("missing keys", missing_);
    list("unexpected keys", unused);
    list("inconsistent tensors", errors_);
    return bad_input("the checkpoint does not match the architecture:" + m);
  }
  VITRT_RETURN_IF_ERROR(graph_.validate_structure());
  VITRT_RETURN_IF_ERROR(resolve_activation_shapes(&graph_));
  *out = std::move(graph_);
  return Status::Ok();
}

Status parse_heads_override(const std::string& text, std::vector<int>* heads) {
  heads->clear();
  size_t p = 0;
  while (p < text.size()) {
    size_t e = text.find(',', p);
    if (e == std::string::npos) e = text.size();
    const std::string item = text.substr(p, e - p);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 4096)
      return invalid_argument("--heads: '" + item + "' is not a positive head count");
    heads->push_back(static_cast<int>(v));
    p = e + 1;
  }
  if (heads->empty()) return invalid_argument("--heads: empty list");
  return Status::Ok();
}

}  // namespace vitrt::convert
